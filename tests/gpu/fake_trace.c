/*
 * fake_trace: writes the trace a correct profiler would record for the
 * `steps` sample under GMEMPROF_SCHEDULE=wait=1,warmup=1,active=2,repeat=1
 * with 4 iterations, plus the expectations JSON the sample would write, so
 * check_trace can be tested on a machine without a GPU. --mutate NAME plants
 * one defect that check_trace must report (exit 1).
 *
 *   fake_trace [--mutate NAME] TRACE.zst EXPECT.json
 *
 * The run, by hand (tid 100, MiB = 1048576 B):
 *   step 0 (wait):    ALLOC model 8 MiB; kernel gm_k_setup (seq 1, not recorded);
 *                     iteration 0: scratch_0 2 MiB, leak_0 1 MiB, kernel seq 2,
 *                     tag after_alloc (live 11 MiB), free scratch_0
 *   step 1 (warmup):  iteration 1: scratch_1 3 MiB, leak_1 1 MiB, kernel seq 3
 *                     (collected, dropped), tag (live 13 MiB), free
 *   step 2 (active):  WINDOW_BEGIN baseline 3 allocations / 10 MiB (model, leak_0,
 *                     leak_1); iteration 2: scratch_2 4 MiB, leak_2, kernel seq 4
 *                     (recorded), tag (live 15 MiB), free
 *   step 3 (active):  iteration 3: scratch_3 5 MiB, leak_3, kernel seq 5, tag
 *                     (live 17 MiB, the peak), free
 *   step 4 (done):    WINDOW_END (last step 3); free model
 * Peak of live device memory: 17 MiB, in step 3.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gmt_io.h"

#define MIB 1048576ull
#define TID 100u

static gmt_writer *g_w;
static gmt_strtab *g_st;
static uint64_t g_ts = 1000000;
static const char *g_mut = "";

static int mut(const char *name) { return !strcmp(g_mut, name); }

static void put(gmt_record *r)
{
    if (gmt_writer_put(g_w, r) != GMT_OK) {
        fprintf(stderr, "fake_trace: write failed\n");
        exit(2);
    }
}

static uint64_t intern(const char *s)
{
    uint64_t id = 0;
    if (gmt_writer_intern(g_w, g_st, s, strlen(s), &id) != GMT_OK) {
        fprintf(stderr, "fake_trace: write failed\n");
        exit(2);
    }
    return id;
}

/* --mutate free_order: one ALLOC held back and written after its FREE
 * (their times stay in order: only the file order is wrong) */
static int g_hold;
static gmt_record g_held;

static void mem(int is_free, uint64_t addr, uint64_t bytes, uint64_t seq, uint64_t step, uint64_t flags,
                uint64_t tid)
{
    gmt_record r;
    memset(&r, 0, sizeof r);
    r.type = is_free ? GMT_REC_FREE : GMT_REC_ALLOC;
    r.u.mem.ts = g_ts += 100;
    r.u.mem.device = 0;
    r.u.mem.address = addr;
    r.u.mem.bytes = bytes;
    r.u.mem.kind = GMT_MEMKIND_DEVICE;
    r.u.mem.source = GMT_SRC_MALLOC;
    r.u.mem.flags = flags;
    r.u.mem.corr = g_ts / 100;
    r.u.mem.tid = tid;
    r.u.mem.seq = seq;
    r.u.mem.step = step;
    if (g_hold && !is_free) {
        g_held = r;
        g_hold = 0;
        return;
    }
    put(&r);
}

static void kernel(const char *name, uint64_t seq, uint64_t step)
{
    gmt_record r;
    memset(&r, 0, sizeof r);
    r.type = GMT_REC_KERNEL;
    r.u.kernel.start = g_ts += 100;
    r.u.kernel.end = r.u.kernel.start + 50;
    r.u.kernel.name = intern(name);
    r.u.kernel.corr = g_ts / 100;
    r.u.kernel.tid = TID;
    r.u.kernel.seq = seq;
    r.u.kernel.step = step;
    r.u.kernel.grid[0] = r.u.kernel.block[0] = 256;
    put(&r);
}

static void tag(uint64_t step, uint64_t live)
{
    gmt_record r;
    memset(&r, 0, sizeof r);
    r.type = GMT_REC_TAG;
    r.u.tag.ts = g_ts += 100;
    r.u.tag.name = intern("after_alloc");
    r.u.tag.step = step;
    r.u.tag.ndev = 1;
    r.u.tag.dev[0].live_bytes = live + (mut("tag") && step == 3 ? 1 : 0);
    r.u.tag.dev[0].driver_total = 80 * 1024 * MIB;
    r.u.tag.dev[0].driver_used = live + 500 * MIB;
    r.u.tag.dev[0].driver_free = r.u.tag.dev[0].driver_total - r.u.tag.dev[0].driver_used;
    put(&r);
}

static void step_rec(uint64_t step, uint64_t phase)
{
    gmt_record r;
    memset(&r, 0, sizeof r);
    r.type = GMT_REC_STEP;
    r.u.step.ts = g_ts += 100;
    r.u.step.step = step;
    r.u.step.phase = phase;
    r.u.step.source = GMT_STEPSRC_API;
    put(&r);
}

static const uint64_t k_phase[5] = {GMT_PHASE_WAIT, GMT_PHASE_WARMUP, GMT_PHASE_ACTIVE,
                                    GMT_PHASE_ACTIVE, GMT_PHASE_DONE};

static int write_trace(const char *path)
{
    g_w = gmt_writer_open(path, NULL);
    g_st = gmt_strtab_create();
    if (!g_w || !g_st) {
        perror("fake_trace");
        return 2;
    }
    gmt_record r;
    memset(&r, 0, sizeof r);
    r.type = GMT_REC_HEADER;
    r.u.header.pid = 4242;
    r.u.header.rank = r.u.header.local_rank = r.u.header.world_size = -1;
    r.u.header.host.ptr = "fake";
    r.u.header.host.len = 4;
    put(&r);
    memset(&r, 0, sizeof r);
    r.type = GMT_REC_DEVICE;
    r.u.device.total_mem = 80 * 1024 * MIB;
    r.u.device.name.ptr = "Fake GPU";
    r.u.device.name.len = 8;
    put(&r);

    const uint64_t model = 0x7f0000000000ull, leak0 = 0x7f0010000000ull, scratch = 0x7f0020000000ull;
    mem(0, model, 8 * MIB, 0, 0, 0, TID);
    uint64_t live = 8 * MIB;
    for (uint64_t k = 0; k < 4; k++) {
        uint64_t step = k;
        int active = k_phase[step] == GMT_PHASE_ACTIVE;
        uint64_t sb = (k + 2) * MIB;
        g_hold = mut("free_order") && k == 1;
        mem(0, scratch, sb, k + 1, step, 0, mut("tid") && k == 3 ? TID + 1 : TID);
        mem(0, leak0 + k * 0x100000ull, MIB, k + 1, step, 0, TID);
        if (mut("extra_alloc") && k == 3)
            mem(0, 0x7f0030000000ull, 4096, k + 1, step, 0, TID);
        live += sb + MIB;
        if (active)
            kernel(mut("consumer") && k == 2 ? "gm_k_other" : "gm_k_step", k + 2, step);
        if (mut("kernel_outside") && k == 1)
            kernel("gm_k_step", k + 2, step);
        tag(step, live);
        if (!(mut("missing_free") && k == 2))
            mem(1, scratch, sb, k + 2, step, 0, TID);
        if (mut("free_order") && k == 1)
            put(&g_held);
        live -= sb;
        /* the boundary: step k+1 begins */
        uint64_t next = k + 1;
        if (k_phase[k] == GMT_PHASE_ACTIVE && k_phase[next] != GMT_PHASE_ACTIVE) {
            memset(&r, 0, sizeof r);
            r.type = GMT_REC_WINDOW_END;
            r.u.wend.ts = g_ts += 100;
            r.u.wend.window = 0;
            r.u.wend.step = k;
            r.u.wend.reason = GMT_WEND_SCHEDULE;
            put(&r);
        }
        step_rec(next, k_phase[next]);
        if (k_phase[next] == GMT_PHASE_ACTIVE && k_phase[k] != GMT_PHASE_ACTIVE) {
            /* baseline: model + leaks of steps 0..k */
            uint64_t n = 1 + (k + 1), bytes = 8 * MIB + (k + 1) * MIB;
            memset(&r, 0, sizeof r);
            r.type = GMT_REC_WINDOW_BEGIN;
            r.u.wbegin.ts = g_ts += 100;
            r.u.wbegin.window = 0;
            r.u.wbegin.step = next;
            r.u.wbegin.baseline_count = n;
            r.u.wbegin.baseline_bytes = bytes + (mut("baseline") ? 4096 : 0);
            put(&r);
            mem(0, model, 8 * MIB, 0, 0, GMT_MEMF_BASELINE, TID);
            for (uint64_t j = 0; j <= k; j++)
                mem(0, leak0 + j * 0x100000ull, MIB, j + 1, j, GMT_MEMF_BASELINE, TID);
        }
    }
    mem(1, model, 8 * MIB, 5, 4, 0, TID);
    memset(&r, 0, sizeof r);
    r.type = GMT_REC_STATS;
    r.u.stats.ts = g_ts += 100;
    r.u.stats.records_written = gmt_writer_records(g_w);
    r.u.stats.dropped_cupti = mut("dropped") ? 1 : 0;
    put(&r);
    if (!mut("truncate")) {
        memset(&r, 0, sizeof r);
        r.type = GMT_REC_TRAILER;
        r.u.trailer.ts = g_ts += 100;
        r.u.trailer.records = gmt_writer_records(g_w);
        put(&r);
    }
    gmt_status st = gmt_writer_close(g_w);
    gmt_strtab_free(g_st);
    return st == GMT_OK ? 0 : 2;
}

/* The expectations, as the steps sample would write them for this run. */
static int write_json(const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return 2;
    }
    fprintf(f, "{\"sample\": \"steps\", \"pid\": 4242, \"steps\": 4, \"allocs\": [\n");
    fprintf(f, "  {\"label\": \"model\", \"source\": \"malloc\", \"bytes\": %llu, \"tid\": %u, \"step\": 0, "
               "\"consumer\": \"gm_k_setup\", \"freed\": true, \"free_tid\": %u, \"free_step\": 4}",
            8 * MIB, TID, TID);
    for (unsigned k = 0; k < 4; k++) {
        fprintf(f, ",\n  {\"label\": \"scratch_%u\", \"source\": \"malloc\", \"bytes\": %llu, \"tid\": %u, "
                   "\"step\": %u, \"consumer\": \"gm_k_step\", \"stream\": null, \"freed\": true, "
                   "\"free_tid\": %u, \"free_step\": %u, \"soft\": false}",
                k, (k + 2) * MIB, TID, k, TID, k);
        fprintf(f, ",\n  {\"label\": \"leak_%u\", \"source\": \"malloc\", \"bytes\": %llu, \"tid\": %u, "
                   "\"step\": %u, \"consumer\": \"gm_k_step\", \"freed\": false}",
                k, MIB, TID, k);
    }
    fprintf(f, "\n], \"kernels\": [{\"name\": \"gm_k_setup\", \"step\": 0, \"count\": 1}");
    for (unsigned k = 0; k < 4; k++)
        fprintf(f, ", {\"name\": \"gm_k_step\", \"step\": %u, \"count\": 1}", k);
    fprintf(f, "],\n \"tags\": [");
    for (unsigned k = 0; k < 4; k++)
        fprintf(f, "%s{\"name\": \"after_alloc\", \"step\": %u, \"live_bytes\": %llu}", k ? ", " : "", k,
                8 * MIB + (k + 1) * MIB + (k + 2) * MIB);
    fprintf(f, "],\n \"live_at_step_start\": [");
    for (unsigned s = 0; s <= 4; s++)
        fprintf(f, "%s{\"step\": %u, \"count\": %u, \"bytes\": %llu}", s ? ", " : "", s, 1 + s,
                8 * MIB + s * MIB);
    fprintf(f, "],\n \"live_at_end\": {\"count\": 4, \"bytes\": %llu}}\n", 4 * MIB);
    return fclose(f) == 0 ? 0 : 2;
}

int main(int argc, char **argv)
{
    int i = 1;
    if (argc > 2 && !strcmp(argv[1], "--mutate")) {
        g_mut = argv[2];
        i = 3;
    }
    if (argc - i != 2) {
        fprintf(stderr, "usage: fake_trace [--mutate NAME] TRACE.zst EXPECT.json\n");
        return 2;
    }
    int rc = write_trace(argv[i]);
    return rc ? rc : write_json(argv[i + 1]);
}
