/* mktrace_bridge PATH: writes the PyTorch-bridge trace of tl_bridge.c (the
 * timeline's layers) into PATH. */
#include <stdio.h>

#include "tl_bridge.h"

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: gma_mktrace_bridge PATH\n");
        return 2;
    }
    return tlb_write(argv[1]) == 0 ? 0 : 1;
}
