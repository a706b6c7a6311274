/*
 * The batch read (gmt_reader_next_hot, then gmt_reader_next for the record
 * that ended the run) against the per-record loop (gmt_reader_next alone):
 * the same records field by field, in the same order, the same return
 * value at the end and the same end info (status, message, counts), with
 * the portable varint decoder and with pext (where the CPU runs it), on
 *  - synthetic traces of several seeds and frame sizes,
 *  - random records of every type with edge values,
 *  - damaged copies of those (bit flips, zeroed and garbage ranges, cuts),
 *  - the trace files named on the command line (the compat fixtures).
 * Batch capacities 1, 7 and 64 cover runs cut by the capacity, by another
 * record type and by the window's end.  Runs under ASan+UBSan in the
 * sanitize build (label "sanitize").
 * usage: test_batch [trace.zst...]
 */
#include "synth.h"
#include "tutil.h"

#define MAX_RECORDS 4000000u

static const char *const mode_names[2] = { "portable", "pext" };

/* The batch loop as an iterator: records of the current run, then the one
 * record from gmt_reader_next that ended it. */
typedef struct batch_it {
    gmt_reader *r;
    gmt_hot *hot;
    size_t cap, n, i;
    int need_next; /* the run is used up and ended short of cap */
    int rc;        /* the final return, once done */
    int done;
} batch_it;

/* 1 with *rec filled, 0 at the end (it->rc says how it ended). */
static int batch_next(batch_it *it, gmt_record *rec)
{
    for (;;) {
        if (it->done)
            return 0;
        if (it->i < it->n) {
            const gmt_hot *h = &it->hot[it->i++];
            CHECK(h->type == GMT_REC_ALLOC || h->type == GMT_REC_FREE || h->type == GMT_REC_KERNEL ||
                      h->type == GMT_REC_MEMCPY || h->type == GMT_REC_MEMSET || h->type == GMT_REC_RANGE_BEGIN ||
                      h->type == GMT_REC_RANGE_END,
                  "run record of type %d", (int)h->type);
            memset(rec, 0, sizeof(*rec));
            rec->type = h->type;
            if (h->type == GMT_REC_KERNEL)
                rec->u.kernel = h->u.kernel;
            else if (h->type == GMT_REC_MEMCPY || h->type == GMT_REC_MEMSET)
                rec->u.copy = h->u.copy;
            else if (h->type == GMT_REC_RANGE_BEGIN || h->type == GMT_REC_RANGE_END)
                rec->u.range = h->u.range;
            else
                rec->u.mem = h->u.mem;
            return 1;
        }
        if (it->need_next) {
            it->need_next = 0;
            int k = gmt_reader_next(it->r, rec);
            if (k > 0)
                return 1;
            it->rc = k;
            it->done = 1;
            return 0;
        }
        it->n = gmt_reader_next_hot(it->r, it->hot, it->cap);
        CHECK(it->n <= it->cap, "run of %zu records for a capacity of %zu", it->n, it->cap);
        it->i = 0;
        it->need_next = it->n < it->cap;
    }
}

static unsigned pext_runs;

/* Reads the input with both loops in step and compares as it goes. */
static void compare_loops(const uint8_t *p, size_t n, size_t cap, int pext, const char *what)
{
    gmt_reader *a = gmt_reader_open_mem(p, n);
    batch_it it;
    memset(&it, 0, sizeof(it));
    it.r = gmt_reader_open_mem(p, n);
    REQUIRE(a != NULL && it.r != NULL, "open");
    int used = gmt_reader_set_pext(it.r, pext);
    CHECK(pext || !used, "%s: pext used although turned off", what);
    pext_runs += (unsigned)used;
    char label[600];
    snprintf(label, sizeof label, "%s, %s, batch %zu", what, mode_names[used], cap);
    it.cap = cap;
    it.hot = calloc(cap, sizeof(*it.hot));
    REQUIRE(it.hot != NULL, "out of memory");
    gmt_record ra, rb;
    char why[256];
    size_t count = 0;
    int ka;
    for (;;) {
        ka = gmt_reader_next(a, &ra);
        int kb = batch_next(&it, &rb);
        if (ka <= 0 || !kb) {
            CHECK((ka > 0) == (kb > 0), "%s: one loop ended after %zu records, the other did not", label, count);
            break;
        }
        if (!tu_record_eq(&ra, &rb, why, sizeof why)) {
            CHECK(0, "%s: record %zu differs: %s", label, count, why);
            break;
        }
        if (++count > MAX_RECORDS) {
            CHECK(0, "%s: more than %u records", label, MAX_RECORDS);
            break;
        }
    }
    if (it.done) {
        CHECK(ka == it.rc, "%s: end %d vs %d", label, ka, it.rc);
        /* after the end, a run is empty and the end stays the end */
        CHECK(gmt_reader_next_hot(it.r, it.hot, cap) == 0, "%s: a run after the end", label);
        CHECK(gmt_reader_next(it.r, &rb) == it.rc, "%s: next after the end changed", label);
    }
    const gmt_reader_end *x = gmt_reader_end_info(a), *y = gmt_reader_end_info(it.r);
    CHECK(x->status == y->status && x->truncated == y->truncated && x->has_trailer == y->has_trailer &&
              x->records == y->records && x->frames == y->frames && x->good_offset == y->good_offset &&
              x->file_size == y->file_size && x->skipped_unknown == y->skipped_unknown && x->major == y->major &&
              x->minor == y->minor,
          "%s: end info differs (records %llu vs %llu, status %d vs %d)", label, (unsigned long long)x->records,
          (unsigned long long)y->records, x->status, y->status);
    CHECK(strcmp(x->message, y->message) == 0, "%s: message \"%s\" vs \"%s\"", label, x->message, y->message);
    free(it.hot);
    gmt_reader_close(it.r);
    gmt_reader_close(a);
}

static void check_input(const uint8_t *p, size_t n, const char *what)
{
    static const size_t caps[] = { 1, 7, 64 };
    for (int pext = 0; pext < 2; pext++)
        for (size_t c = 0; c < sizeof caps / sizeof caps[0]; c++)
            compare_loops(p, n, caps[c], pext, what);
}

/* Random records of every type (edge values included), mostly of the hot
 * types so that runs are long. */
static tu_buf random_trace(uint64_t seed, size_t count, size_t frame_bytes)
{
    static const gmt_type hot[] = { GMT_REC_ALLOC,  GMT_REC_FREE,        GMT_REC_KERNEL,   GMT_REC_MEMCPY,
                                    GMT_REC_MEMSET, GMT_REC_RANGE_BEGIN, GMT_REC_RANGE_END };
    tu_rng g = { seed };
    static tu_strpool pool;
    tu_rec *recs = calloc(count, sizeof(*recs));
    REQUIRE(recs != NULL, "out of memory");
    for (size_t i = 0; i < count; i++) {
        gmt_record rec;
        gmt_type t = tu_below(&g, 8) ? hot[tu_below(&g, 7)] : (gmt_type)0; /* 0: any type */
        tu_random_record(&g, &pool, t, &rec);
        tu_rec_copy(&recs[i], &rec);
    }
    char path[256];
    tu_tmp_path(path, sizeof path, "batch-rand");
    REQUIRE(tu_write_records(path, recs, count, frame_bytes, 1, NULL) == GMT_OK, "write");
    for (size_t i = 0; i < count; i++)
        tu_rec_free(&recs[i]);
    free(recs);
    tu_buf b = tu_slurp(path);
    unlink(path);
    return b;
}

static void damage(tu_rng *g, uint8_t *p, size_t *n)
{
    size_t at = tu_below(g, *n);
    size_t len = 1 + tu_below(g, *n - at < 64 ? *n - at : 64);
    switch (tu_below(g, 4)) {
    case 0:
        for (int i = 0, m = 1 + (int)tu_below(g, 8); i < m; i++)
            p[tu_below(g, *n)] ^= (uint8_t)(1u << tu_below(g, 8));
        break;
    case 1:
        memset(p + at, 0, len);
        break;
    case 2:
        for (size_t i = 0; i < len; i++)
            p[at + i] = (uint8_t)tu_next(g);
        break;
    default:
        *n = at;
        break;
    }
}

int main(int argc, char **argv)
{
    char what[512];
    tu_rng g = { 42 };
    for (uint64_t seed = 1; seed <= 3; seed++) {
        static const size_t frames[] = { 4096, 65536, 1u << 20 };
        tu_buf b = tu_synth_trace("batch", seed, 60000, frames[seed - 1]);
        snprintf(what, sizeof what, "synth seed %llu", (unsigned long long)seed);
        check_input(b.p, b.n, what);
        for (int k = 0; k < 12; k++) {
            uint8_t *c = malloc(b.n);
            REQUIRE(c != NULL, "out of memory");
            memcpy(c, b.p, b.n);
            size_t n = b.n;
            damage(&g, c, &n);
            snprintf(what, sizeof what, "synth seed %llu, damaged %d", (unsigned long long)seed, k);
            check_input(c, n, what);
            free(c);
        }
        tu_buf_free(&b);
    }
    for (uint64_t seed = 1; seed <= 4; seed++) {
        tu_buf b = random_trace(seed, 3000, seed & 1 ? 2048 : 1u << 20);
        snprintf(what, sizeof what, "random records %llu", (unsigned long long)seed);
        check_input(b.p, b.n, what);
        tu_buf_free(&b);
    }
    for (int i = 1; i < argc; i++) {
        tu_buf b = tu_slurp(argv[i]);
        check_input(b.p, b.n, argv[i]);
        tu_buf_free(&b);
    }
    fprintf(stderr, "test_batch: %u of the batch runs used pext\n", pext_runs);
    return tc_result("test_batch");
}
