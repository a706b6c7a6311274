/*
 * The registry of printers (print.h): one row a --format, indexed by
 * gma_format. A new format is a file that defines a gma_printer and a row
 * here.
 */
#include <string.h>

#include "print.h"

static const gma_printer *const PRINTERS[] = {
    [GMA_FMT_TABLE] = &gma_printer_table,
    [GMA_FMT_CSV] = &gma_printer_csv,
    [GMA_FMT_JSON] = &gma_printer_json,
};

#define NPRINTERS (sizeof PRINTERS / sizeof PRINTERS[0])

const gma_printer *gma_printer_of(gma_format fmt)
{
    return (unsigned)fmt < NPRINTERS && PRINTERS[fmt] ? PRINTERS[fmt] : &gma_printer_table;
}

int gma_format_named(const char *name)
{
    for (size_t i = 0; i < NPRINTERS; i++)
        if (PRINTERS[i] && strcmp(PRINTERS[i]->name, name) == 0)
            return (int)i;
    return -1;
}

const char *gma_format_names(void)
{
    static char names[128];
    if (!names[0])
        for (size_t i = 0, len = 0; i < NPRINTERS && PRINTERS[i]; i++)
            len += (size_t)snprintf(names + len, sizeof names - len, "%s%s", i ? ", " : "", PRINTERS[i]->name);
    return names;
}
