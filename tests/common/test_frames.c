/*
 * Frame structure of a written trace: standard zstd frames, each with a
 * checksum and a known content size; the preamble only at the start of the
 * first; every frame's first record is its TIMES record (format 2.0) and
 * its records use all of it; no record straddles two frames; and every frame
 * decodes ON ITS OWN with a freshly reset delta state (the writer resets it
 * at each frame).
 */
#include <zstd.h>

#include "tutil.h"

#define NREC 3000

static tu_rec recs[NREC];
static tu_strpool pool;

int main(void)
{
    tu_rng rng = { 99 };
    for (size_t i = 0; i < NREC; i++) {
        gmt_record tmp;
        gmt_type t = (gmt_type)(1 + tu_below(&rng, GMT_REC_TYPE_MAX_ - 1));
        if (t == GMT_REC_HEADER || t == GMT_REC_DEVICE || t == GMT_REC_STRING)
            t = GMT_REC_KERNEL;
        tu_random_record(&rng, &pool, t, &tmp);
        tu_rec_copy(&recs[i], &tmp);
    }
    for (int pass = 0; pass < 3; pass++) {
        static const size_t fb[3] = { 2000, 1, 100000 };
        char path[256];
        tu_tmp_path(path, sizeof path, "frames");
        uint64_t wframes = 0;
        REQUIRE(tu_write_records(path, recs, NREC, fb[pass], 3, &wframes) == GMT_OK, "write");
        tu_buf f = tu_slurp(path);
        unlink(path);
        size_t pos = 0, frame = 0, next = 0;
        static uint8_t raw[64u << 20];
        char why[200];
        while (pos < f.n) {
            size_t fl = ZSTD_findFrameCompressedSize(f.p + pos, f.n - pos);
            REQUIRE(!ZSTD_isError(fl), "frame %zu: %s", frame, ZSTD_getErrorName(fl));
            /* RFC 8878: magic 28 b5 2f fd, then the frame header descriptor,
             * whose bit 2 is Content_Checksum_flag */
            CHECK(fl > 5 && f.p[pos] == 0x28 && f.p[pos + 1] == 0xb5 && f.p[pos + 2] == 0x2f && f.p[pos + 3] == 0xfd,
                  "frame %zu magic", frame);
            CHECK((f.p[pos + 4] & 0x04) != 0, "frame %zu has no checksum", frame);
            unsigned long long cs = ZSTD_getFrameContentSize(f.p + pos, fl);
            CHECK(cs != ZSTD_CONTENTSIZE_UNKNOWN && cs != ZSTD_CONTENTSIZE_ERROR, "frame %zu: unknown content size",
                  frame);
            size_t rn = ZSTD_decompress(raw, sizeof raw, f.p + pos, fl);
            REQUIRE(!ZSTD_isError(rn), "decompress frame %zu", frame);
            size_t p = 0;
            if (frame == 0) {
                uint16_t ma, mi;
                CHECK(gmt_preamble_parse(raw, rn, &ma, &mi) == GMT_OK, "preamble");
                p = GMT_PREAMBLE_LEN;
            } else {
                CHECK(rn < GMT_MAGIC_LEN || memcmp(raw, GMT_MAGIC, GMT_MAGIC_LEN) != 0, "preamble repeated in frame %zu",
                      frame);
            }
            gmt_codec c;
            gmt_codec_reset(&c); /* a fresh state: the frame must stand alone */
            uint64_t tl = 0;
            int lb = p + 1 < rn ? gmt_varint_get(raw + p + 1, rn - p - 1, &tl) : 0;
            CHECK(p < rn && raw[p] == GMT_WIRE_TIMES && lb > 0 && p + 1 + (size_t)lb + tl <= rn,
                  "frame %zu does not start with its TIMES record", frame);
            if (lb <= 0)
                break;
            gmt_codec_set_time_source(&c, raw + p + 1 + lb, (size_t)tl);
            p += 1 + (size_t)lb + (size_t)tl;
            while (p < rn) {
                gmt_record rec;
                size_t used = 0;
                gmt_status st = gmt_decode(&c, raw + p, rn - p, &rec, &used);
                CHECK(st == GMT_OK, "frame %zu offset %zu: %s (a record straddles frames?)", frame, p,
                      gmt_status_str(st));
                if (st != GMT_OK)
                    break;
                CHECK(next < NREC && tu_record_eq(&recs[next].r, &rec, why, sizeof why), "frame %zu record %zu: %s",
                      frame, next, why);
                next++;
                p += used;
            }
            CHECK(gmt_codec_time_left(&c) == 0, "frame %zu: %zu time bytes unused", frame, gmt_codec_time_left(&c));
            pos += fl;
            frame++;
        }
        CHECK(next == NREC, "pass %d: %zu records decoded frame by frame", pass, next);
        CHECK(frame == wframes, "pass %d: %zu frames in the file, writer counted %llu", pass, frame,
              (unsigned long long)wframes);
        CHECK(pass != 1 || frame == NREC, "frame_bytes 1: one record per frame");
        CHECK(pass != 0 || frame > 10, "frame_bytes 2000: %zu frames", frame);
        fprintf(stderr, "frame_bytes %zu: %zu frames, all independent\n", fb[pass], frame);
        tu_buf_free(&f);
    }
    for (size_t i = 0; i < NREC; i++)
        tu_rec_free(&recs[i]);
    return tc_result("test_frames");
}
