/*
 * The printers (analyzer/print/print.h, printers.c): the registry that --format
 * reads, a failure written by the table and the CSV printer, and the
 * insights written by the CSV and the JSON printer, from views filled here,
 * every line worked out by hand.
 */
#include "print.h"

#include "../check.h"

static void test_registry(void)
{
    CHECK(gma_format_named("table") == GMA_FMT_TABLE);
    CHECK(gma_format_named("csv") == GMA_FMT_CSV);
    CHECK(gma_format_named("json") == GMA_FMT_JSON);
    CHECK(gma_format_named("xml") == -1);
    CHECK(gma_format_named("CSV") == -1);
    CHECK_STR(gma_format_names(), "table, csv, json");
    CHECK(gma_printer_of(GMA_FMT_CSV) == &gma_printer_csv);
    CHECK(gma_printer_of((gma_format)99) == &gma_printer_table);
    for (int i = 0; i < 3; i++) {
        const gma_printer *p = gma_printer_of((gma_format)i);
        tc_context("%s", p->name);
        CHECK(p->report && p->diff && p->ranks && p->fit && p->view && p->insights);
        /* a person's table lists the first 3 owners of a group, the others --top's */
        CHECK_EQ_U64(p->group_rows, i == GMA_FMT_TABLE ? 3 : 0);
        CHECK(gma_format_named(p->name) == i);
        /* the table prints failures before any report; CSV and JSON carry
         * them inside theirs */
        CHECK(!p->failures == (i != GMA_FMT_TABLE));
    }
    tc_context(NULL);
}

/* A CUDA failure on device 1: 1 MiB asked by thread 7 in "op,1" at step 3,
 * 512 KiB free of 4 MiB, 3 MiB held by one allocation of kernel k. */
static void fill(gma_oom_fail *f, gma_oom_section *x, gma_oom_step *st)
{
    memset(f, 0, sizeof *f);
    memset(x, 0, sizeof *x);
    f->o.cause = GMT_OOM_CUDA;
    f->o.dump = 2;
    f->o.device = 1;
    f->o.bytes = 1048576;
    f->o.tid = 7;
    f->o.step = 3;
    f->o.status = 2;
    f->o.flags = GMT_OOMF_DRIVER;
    f->o.driver_free = 524288;
    f->dev_total = 4194304; /* the record's own total is 0: the DEVICE record's */
    snprintf(f->op, sizeof f->op, "op,1");
    snprintf(f->api, sizeof f->api, "cuMemAlloc_v2");
    f->live_count = 1;
    f->live_bytes = 3145728;
    f->cls_bytes[GMA_OOM_PERSISTENT] = 3145728;
    f->cls_count[GMA_OOM_PERSISTENT] = 1;
    snprintf(f->top[0].name, sizeof f->top[0].name, "k");
    f->top[0].bytes = 3145728;
    f->top[0].count = 1;
    f->ntop = 1;
    f->owners = 1;
    x->f = f;
    x->why.n = 1;
    x->why.r[0].why = GMA_WHY_OUTSIDE;
    x->why.r[0].bytes = 1048576;
    snprintf(x->why.r[0].text, sizeof x->why.r[0].text, "text");
    snprintf(x->why.r[0].try_, sizeof x->why.r[0].try_, "try");
    *st = (gma_oom_step){ 3, 100, 50, 0, 100, 0 };
    gma_vec_init(&x->steps, sizeof(gma_oom_step));
    *(gma_oom_step *)gma_vec_push(&x->steps) = *st;
}

static char *print_to_string(void (*csv)(FILE *, const gma_oom_view *), int (*table)(FILE *, const gma_oom_view *),
                             const gma_oom_view *v)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    if (csv)
        csv(f, v);
    else
        CHECK(table(f, v) == 0);
    fclose(f);
    return buf;
}

static void test_failure(void)
{
    gma_oom_fail f;
    gma_oom_section x;
    gma_oom_step st;
    fill(&f, &x, &st);
    gma_oom_view v = { &x, 1 };
    char *csv = print_to_string(gma_print_oom_csv, NULL, &v);
    CHECK_STR(csv, "# failure.1: cause=cuda dump=2 device=1 bytes=1048576 stream=0 tid=7 step=3 op=\"op,1\" "
                   "api=cuMemAlloc_v2 status=2 driver_free=524288 driver_total=4194304 live_count=1 "
                   "live_bytes=3145728 first_step=0 trimmed=0 outside_every_window=0 persistent_bytes=3145728 "
                   "step_scoped_bytes=0 temporary_bytes=0 allocator_settings=\n"
                   "# failure.1.cause: cause=outside the allocator bytes=1048576 reason=text try=try\n"
                   "# failure.1.owner: name=k bytes=3145728 count=1\n"
                   "# failure.1.step: step=3 alloc_bytes=100 freed_bytes=50 live_end_bytes= peak_bytes=100\n");
    free(csv);
    char *txt = print_to_string(NULL, gma_print_oom_table, &v);
    CHECK_HAS(txt, "Out of memory, dump 2: the CUDA call cuMemAlloc_v2 failed (CUresult 2)\n");
    CHECK_HAS(txt, "  asked       1.0 MiB on device 1, thread 7, stream 0x0, step 3, in \"op,1\"\n");
    CHECK_HAS(txt, "  free        512.0 KiB of 4.0 MiB (the driver, at the failure)\n");
    CHECK_HAS(txt, "  held        3.0 MiB in 1 allocation on device 1, by lifetime:\n");
    CHECK_HAS(txt, "    1. outside the allocator: text\n       try: try\n");
    free(txt);
    /* no failure: no line in any format */
    gma_oom_view none = { NULL, 0 };
    csv = print_to_string(gma_print_oom_csv, NULL, &none);
    CHECK_STR(csv, "");
    free(csv);
    gma_vec_free(&x.steps);
}

/* One run's insights on dev0, in categories: a 16 MiB peak at 5 ms of step
 * 2 holding 12 MiB of parameters in 2 blocks and 4 MiB of activations in 1
 * (shares 0.75 and 0.25); the other categories empty, so not shown. */
static void fill_insights(gma_ins_result *res, int categories)
{
    memset(res, 0, sizeof *res);
    res->path = "run.gmt";
    res->owner_kind = "op";
    res->categories = categories;
    res->ncls = categories ? GMA_CAT_COUNT_ : GMA_IC_COUNT_;
    res->ic_outside = categories ? GMA_CAT_OUTSIDE : GMA_IC_OUTSIDE;
    res->ic_cache = categories ? GMA_CAT_CACHE : GMA_IC_RESERVED;
    res->cls_names = categories ? gma_cat_names : gma_ins_class_names;
    res->ndev = 1;
    gma_ins_dev *D = &res->dev[0];
    D->peak = D->live_sum = 16u << 20;
    D->peak_ns = 5000000;
    D->step = 2;
    for (unsigned k = 0; k < GMA_INS_CLASSES; k++) {
        gma_vec_init(&D->cls[k].owners, sizeof(gma_ins_owner));
        D->cls[k].known = k < res->ncls;
    }
    unsigned a = categories ? GMA_CAT_PARAMETER : GMA_IC_PERSISTENT, b = categories ? GMA_CAT_ACTIVATION : GMA_IC_STEP;
    D->cls[a].bytes = 12u << 20;
    D->cls[a].count = 2;
    D->cls[b].bytes = 4u << 20;
    D->cls[b].count = 1;
    D->life[GMA_IC_PERSISTENT] = 12u << 20;
    D->life_count[GMA_IC_PERSISTENT] = 2;
    D->life[GMA_IC_STEP] = 4u << 20;
    D->life_count[GMA_IC_STEP] = 1;
}

static char *print_insights(int (*fn)(FILE *, const gma_insights_view *), const gma_insights_view *v)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    CHECK(fn(f, v) == 0);
    fclose(f);
    return buf;
}

static void test_insights(void)
{
    gma_ins_result res;
    fill_insights(&res, 1);
    gma_table t;
    REQUIRE(gma_insights_table(&t, &res, NULL, 0) == 0);
    REQUIRE(t.nrows == 2);
    /* the columns: device, finding, owner, bytes (3), share, count, change, reason (7), try (8) */
    gma_insights_view v = { { &res, NULL }, 1, &t, 3, 7, 8 };
    char *csv = print_insights(gma_print_insights_csv, &v);
    CHECK_STR(csv, "# trace: path=run.gmt owners=op\n"
                   "# peak: device=0 bytes=16777216 ns=5000000 step=2 window=0\n"
                   "device,finding,owner,bytes,share,count,change_bytes,reason,try\n"
                   "0,parameter,,12582912,0.75,2,,\"the model's weights and buffers: made before training, kept to "
                   "the end\",\"lower precision, sharded parameters (FSDP), or fewer parameters\"\n"
                   "0,activation,,4194304,0.25,1,,\"made in forward, kept for backward\",\"activation checkpointing "
                   "of the top owners, a fused kernel that keeps less, smaller batch\"\n");
    free(csv);
    char *json = print_insights(gma_print_insights_json, &v);
    CHECK_HAS(json, "\"path\": \"run.gmt\"");
    CHECK_HAS(json, "\"warning\": null");
    CHECK_HAS(json, "\"peak_ns\": 5000000");
    /* every category, empty ones too: a program finds each key */
    CHECK_HAS(json, "\"parameter\": {");
    CHECK_HAS(json, "\"outside the allocator\": {");
    CHECK_HAS(json, "\"bytes\": 12582912");
    /* and the lifetime split beside them */
    CHECK_HAS(json, "\"lifetimes\": {");
    CHECK_HAS(json, "\"step-scoped\": {");
    CHECK_HAS(json, "\"finding\": \"activation\"");
    CHECK(!strstr(json, "\"reserved, unallocated\""));
    free(json);
    gma_table_free(&t);
    gma_insights_result_free(&res);
    /* lifetimes where there are no categories: no second split */
    fill_insights(&res, 0);
    REQUIRE(gma_insights_table(&t, &res, NULL, 0) == 0);
    v.t = &t;
    json = print_insights(gma_print_insights_json, &v);
    CHECK_HAS(json, "\"persistent\": {");
    CHECK_HAS(json, "\"reserved, unallocated\": {");
    CHECK(!strstr(json, "\"lifetimes\"") && !strstr(json, "\"parameter\""));
    free(json);
    csv = print_insights(gma_print_insights_csv, &v);
    /* persistent, step-scoped and temporary (empty, still shown); outside and reserved empty: not shown */
    CHECK_HAS(csv, "\n0,persistent,,12582912,0.75,2,,");
    CHECK_HAS(csv, "\n0,temporary,,0,0,0,,");
    free(csv);
    gma_table_free(&t);
    gma_insights_result_free(&res);
}

int main(void)
{
    test_registry();
    test_failure();
    test_insights();
    return tc_result("analyzer.unit.printers");
}
