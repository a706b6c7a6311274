/*
 * mktl_cats: a PyTorch-bridge trace with more blocks than the timeline
 * draws one by one, in several categories, for the browser test of the
 * merged layer's split by category (run_timeline_browser.py --cats).
 *
 *   gma_mktl_cats OUT TRUTH
 *
 * Thread 100, dev0, one event per us from 10 ms after the trace start.
 * Before training, 64 blocks of 1 MiB (parameters: made before the first
 * module or optimizer step, never freed) and one of 2 GiB made and freed
 * within aten::add (a temporary: the peak, early, so that the replay's
 * peak does not move with every later block). Then two steps, each: module
 * GPT (kind 2) with 1,000 aten::mm ops (kind 1), each making 100 blocks of
 * 512 B to 32 KiB kept for backward (activations: made in a module's
 * forward, freed in backward) and one of 256 B to 4 KiB freed within the
 * op (a temporary); then MmBackward0 ops (kind 1) that free the step's
 * activations, 100 at a time. At the end of a forward 100,000 small
 * activations are live: the page keeps 80,000 bands and merges the rest.
 * Addresses are never reused.
 *
 * TRUTH gets one line per event, "T PARAMETER ACTIVATION TEMPORARY": the
 * time in ns from the trace's start (as the page's times) and the bytes of
 * each category live after it (category.c's rules, docs/analyzer.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gmt_io.h"
#include "sc_writer.h"

#define T0 1000000000ull
#define US 1000ull
#define KIB 1024ull
#define MIB (1024ull * 1024ull)

enum { S_GPT = 1, S_MM, S_MMB, S_ADD };
enum { C_PARAM, C_ACT, C_TEMP };

static sc_tb B;
static uint64_t now = T0 + 10000 * US, addr = 0x10000000ull, rid;
static FILE *truth;
static uint64_t live[3];

/* The live bytes by category after the event at now. */
static void note(int cat, int64_t d)
{
    live[cat] = (uint64_t)((int64_t)live[cat] + d);
    fprintf(truth, "%llu %llu %llu %llu\n", (unsigned long long)(now - T0), (unsigned long long)live[C_PARAM],
            (unsigned long long)live[C_ACT], (unsigned long long)live[C_TEMP]);
}

static void put(const gmt_record *r) { sc_put(&B, r); }

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void string(uint64_t id, const char *s) { sc_string(&B, id, s); }

static uint64_t rbegin(uint64_t parent, uint64_t name, uint64_t kind)
{
    gmt_record r;
    memset(&r, 0, sizeof(r));
    r.type = GMT_REC_RANGE_BEGIN;
    r.u.range = (gmt_range){ .ts = now += US, .tid = 100, .id = ++rid, .parent = parent, .name = name, .kind = kind };
    put(&r);
    return rid;
}

static void rend(uint64_t id)
{
    gmt_record r;
    memset(&r, 0, sizeof(r));
    r.type = GMT_REC_RANGE_END;
    r.u.range = (gmt_range){ .ts = now += US, .tid = 100, .id = id };
    put(&r);
}

static void blk(unsigned action, uint64_t a, uint64_t bytes, uint64_t range, uint64_t step, int cat)
{
    gmt_record r;
    memset(&r, 0, sizeof(r));
    r.type = GMT_REC_BLOCK;
    r.u.block.ts = now += US;
    r.u.block.action = action;
    r.u.block.address = a;
    r.u.block.bytes = bytes;
    r.u.block.requested = action == GMT_BLK_ALLOC ? bytes : 0;
    r.u.block.stream = 7;
    r.u.block.tid = 100;
    r.u.block.range = range;
    r.u.block.step = step;
    put(&r);
    note(cat, action == GMT_BLK_ALLOC ? (int64_t)bytes : -(int64_t)bytes);
}

static void step_rec(uint64_t n)
{
    gmt_record r;
    memset(&r, 0, sizeof(r));
    r.type = GMT_REC_STEP;
    r.u.step.ts = now += US;
    r.u.step.step = n;
    r.u.step.phase = GMT_PHASE_ACTIVE;
    r.u.step.source = GMT_STEPSRC_API;
    put(&r);
}

#define OPS 1000
#define PER_OP 100

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: gma_mktl_cats OUT TRUTH\n");
        return 2;
    }
    truth = fopen(argv[2], "w");
    if (!truth) {
        perror(argv[2]);
        return 1;
    }
    if (sc_open(&B, argv[1]) != 0)
        return 1;
    sc_header(&B, &SC_HEAD(4646, T0));
    sc_device(&B, 0, NULL, 16ull << 30);
    gmt_record r;
    string(S_GPT, "GPT");
    string(S_MM, "aten::mm");
    string(S_MMB, "MmBackward0");
    string(S_ADD, "aten::add");
    step_rec(0);
    for (int i = 0; i < 64; i++, addr += MIB)
        blk(GMT_BLK_ALLOC, addr, MIB, 0, 0, C_PARAM);
    uint64_t add = rbegin(0, S_ADD, GMT_RANGE_OP);
    blk(GMT_BLK_ALLOC, addr, 2048 * MIB, add, 0, C_TEMP);
    blk(GMT_BLK_FREE_REQUESTED, addr, 2048 * MIB, add, 0, C_TEMP);
    addr += 2048 * MIB;
    rend(add);
    uint64_t *act = malloc(OPS * PER_OP * sizeof(*act)), *asz = malloc(OPS * PER_OP * sizeof(*asz));
    if (!act || !asz)
        return 1;
    for (uint64_t s = 0; s < 2; s++) {
        uint64_t gpt = rbegin(0, S_GPT, GMT_RANGE_MODULE), na = 0;
        for (int k = 0; k < OPS; k++) {
            uint64_t mm = rbegin(gpt, S_MM, GMT_RANGE_OP);
            for (int j = 0; j < PER_OP; j++, na++) {
                asz[na] = 512 << (next() % 7); /* 512 B .. 32 KiB */
                act[na] = addr;
                addr += asz[na];
                blk(GMT_BLK_ALLOC, act[na], asz[na], mm, s, C_ACT);
            }
            uint64_t tb = 256 << (next() % 5), ta = addr;
            addr += tb;
            blk(GMT_BLK_ALLOC, ta, tb, mm, s, C_TEMP);
            blk(GMT_BLK_FREE_REQUESTED, ta, tb, mm, s, C_TEMP);
            rend(mm);
        }
        rend(gpt);
        for (uint64_t k = 0; k < na; k += PER_OP) {
            uint64_t b = rbegin(0, S_MMB, GMT_RANGE_OP);
            for (uint64_t j = k; j < k + PER_OP && j < na; j++)
                blk(GMT_BLK_FREE_REQUESTED, act[j], asz[j], b, s, C_ACT);
            rend(b);
        }
        step_rec(s + 1);
    }
    free(act);
    free(asz);
    memset(&r, 0, sizeof(r));
    r.type = GMT_REC_STATS;
    r.u.stats.ts = now += US;
    put(&r);
    sc_trailer(&B, now, 0);
    int bad = sc_close(&B, argv[1]) != 0;
    if (fclose(truth) != 0) {
        perror(argv[2]);
        bad = 1;
    }
    return bad;
}
