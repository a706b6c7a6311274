/*
 * --format table: the reports beside the summary report -- a view's own
 * table with its notes (--by category) and the insights -- each a head,
 * a grid and the lines a person reads after it.
 */
#include <string.h>

#include "print.h"

int gma_print_view_table(FILE *f, const gma_view_report *v)
{
    gma_print_head(f, "%s", v->what);
    gma_print_title(f, &v->t, "%s", v->t.title);
    gma_print_grid(f, &v->t);
    for (size_t i = 0; i < v->nnotes; i++)
        if (v->notes[i].text[0])
            fprintf(f, "\n%s: %s\n", v->notes[i].label, v->notes[i].text);
    return ferror(f) ? -1 : 0;
}

/* The head of one run's insights: its warning, what it is, its peaks. */
static void insights_head(FILE *f, const gma_ins_result *res, const char *label)
{
    char b1[GMA_FMT_CAP], b2[GMA_FMT_CAP];
    if (res->warning[0])
        fprintf(f, "WARNING: %s\n", res->warning);
    gma_print_head(f, "%s%s (insights; owners are %s)", res->path, label,
                   strcmp(res->owner_kind, "module") == 0 ? "modules, else ops, else kernels"
                   : strcmp(res->owner_kind, "op") == 0 ? "ops, else kernels" : "kernels");
    for (size_t i = 0; i < res->ndev; i++) {
        const gma_ins_dev *D = &res->dev[i];
        fprintf(f, "Peak       dev%u: %s at %s ms, step %llu, window %llu\n", D->device, gma_fmt_bytes(b1, D->peak),
                gma_fmt_ms(b2, D->peak_ns), (unsigned long long)D->step, (unsigned long long)D->window);
    }
}

/* The grid keeps to numbers; each finding's reason and what to try follow
 * it, one finding a paragraph (CSV and JSON have them as columns). */
static void insights_notes(FILE *f, const gma_insights_view *v)
{
    const gma_table *t = v->t;
    char n[GMA_FMT_CAP * 2];
    fprintf(f, "\nWhy, and what to try\n");
    for (size_t i = 0; i < t->nrows; i++) {
        const gma_cell *why = gma_table_cell(t, i, v->reason), *what = gma_table_cell(t, i, v->try_);
        if (what->null || why->null)
            continue;
        const gma_cell *fd = gma_table_cell(t, i, 1), *ow = gma_table_cell(t, i, 2);
        gma_cell_format(t, v->num, gma_table_cell(t, i, v->num), 1, n, sizeof(n));
        gma_print_advice(f, gma_cell_text(t, why), gma_cell_text(t, what), "dev%llu %s%s%s, %s",
                         (unsigned long long)gma_table_cell(t, i, 0)->v.u, gma_cell_text(t, fd), ow->null ? "" : " ",
                         ow->null ? "" : gma_cell_text(t, ow), n);
    }
}

int gma_print_insights_table(FILE *f, const gma_insights_view *v)
{
    for (size_t i = 0; i < v->nrun; i++)
        insights_head(f, v->run[i], v->nrun < 2 ? "" : i ? " (B)" : " (A)");
    /* the grid alone: without rows it keeps its header line */
    gma_print_title(f, v->t, "%s", v->t->title);
    gma_print_grid(f, v->t);
    insights_notes(f, v);
    return ferror(f) ? -1 : 0;
}
