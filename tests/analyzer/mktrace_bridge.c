/* mktrace_bridge PATH [SHIFT_MS]: writes the PyTorch-bridge trace of
 * tl_bridge.c (the timeline's layers) into PATH, every time SHIFT_MS later
 * (another rank that started later). */
#include <stdio.h>
#include <stdlib.h>

#include "tl_bridge.h"

int main(int argc, char **argv)
{
    char *end = NULL;
    unsigned long long ms = argc == 3 ? strtoull(argv[2], &end, 10) : 0;
    if (argc < 2 || argc > 3 || (argc == 3 && (!*argv[2] || *end))) {
        fprintf(stderr, "usage: gma_mktrace_bridge PATH [SHIFT_MS]\n");
        return 2;
    }
    return tlb_write_at(argv[1], (uint64_t)ms * 1000000ull) == 0 ? 0 : 1;
}
