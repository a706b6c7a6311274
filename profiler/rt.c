/*
 * The run-time state the profiler's modules share (gmp_rt.h): defined here,
 * below every module, so that a source or the writer reaches down for it and
 * never up to the entry points (inject.c), which fill it.
 */
#include "gmp_rt.h"

gmp_rt gmp_g;
__thread gmp_tls gmp_t;

static const gmp_config *g_settings;
static const gmp_config g_none; /* before the settings are read: all off */

void gmp_settings_publish(const gmp_config *cfg) { g_settings = cfg; }

const gmp_config *gmp_settings(void) { return g_settings ? g_settings : &g_none; }
