/*
 * Writers of the timeline model (tl_model.h): the self-contained HTML page
 * (tl_html.c: the model as JSON plus the inline script and style of
 * tl_page_js.c / tl_page_css.c, generated from page.js and page.css) and
 * the static SVG picture (tl_svg.c). Both return 0, or -1 on a write error.
 */
#ifndef GTW_WRITE_H
#define GTW_WRITE_H

#include <stdio.h>

#include "tl_model.h"

int gtw_html(FILE *f, const gtm_doc *d);
int gtw_svg(FILE *f, const gtm_doc *d);

/* The palette: colour i of the top owners, and the grey of the rest. */
const char *gtw_color(const gtm_doc *d, size_t i);

/* The page's script and style, NUL-terminated (generated at build time). */
extern const char gtw_page_js[];
extern const char gtw_page_css[];

#endif
