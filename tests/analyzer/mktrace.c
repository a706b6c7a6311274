/* mktrace DIR: writes the scenario traces of scenarios.c into DIR. */
#include <stdio.h>

#include "scenarios.h"

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: mktrace DIR\n");
        return 2;
    }
    return sc_write_all(argv[1]) == 0 ? 0 : 1;
}
