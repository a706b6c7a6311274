/*
 * --format csv: the reports beside the summary report -- a view's own
 * table (--by category) and the insights -- as "# " lines, then the rows.
 */
#include "print.h"

int gma_print_view_csv(FILE *f, const gma_view_report *v)
{
    for (size_t i = 0; i < v->nnotes; i++)
        if (v->notes[i].text[0]) {
            fprintf(f, "# %s: ", v->notes[i].key);
            gma_csv_text(f, v->notes[i].text);
            fputc('\n', f);
        }
    gma_print_csv_rows(f, &v->t);
    return ferror(f) ? -1 : 0;
}

static void insights_head(FILE *f, const gma_ins_result *res, const char *label)
{
    if (res->warning[0])
        fprintf(f, "# WARNING: %s\n", res->warning);
    fprintf(f, "# trace%s: path=%s owners=%s\n", label, res->path, res->owner_kind);
    for (size_t i = 0; i < res->ndev; i++) {
        const gma_ins_dev *D = &res->dev[i];
        fprintf(f, "# peak%s: device=%u bytes=%llu ns=%lld step=%llu window=%llu\n", label, D->device,
                (unsigned long long)D->peak, (long long)D->peak_ns, (unsigned long long)D->step,
                (unsigned long long)D->window);
    }
}

int gma_print_insights_csv(FILE *f, const gma_insights_view *v)
{
    for (size_t i = 0; i < v->nrun; i++)
        insights_head(f, v->run[i], v->nrun < 2 ? "" : i ? " (B)" : " (A)");
    gma_print_csv_rows(f, v->t);
    return ferror(f) ? -1 : 0;
}
