/*
 * dpcchart.c - the DPC (or ISR) durations of one module, sorted longest
 * first, one line per trace, as an SVG chart with the guidance limit:
 * how the tail of one driver's DPCs compares across traces.  Each trace
 * keeps a count per distinct duration (dpc_durs), so the chart's memory
 * does not grow with the number of DPCs; the sorted durations are walked
 * from the longest down, one run of equal values at a time.
 */
#include "report/dpcisr_int.h"
#include "base/escape.h"
#include "base/cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct trace_series {
	char *label;
	struct dpc_durs d;	/* ascending */
	size_t n;		/* the number of durations */
};

/* the durations of a series from the longest down, as a cursor over d's runs */
struct desc_cursor {
	const struct dpc_durs *d;
	size_t run;		/* index in d->v, counted from the end */
	uint64_t left;		/* durations left in that run */
};

static void
cursor_init(struct desc_cursor *c, const struct dpc_durs *d)
{
	c->d = d;
	c->run = 0;
	c->left = d->n ? d->v[d->n - 1].n : 0;
}

/* The next duration, longest first; there must be one. */
static double
cursor_next(struct desc_cursor *c)
{
	while (c->left == 0) {
		c->run++;
		c->left = c->d->v[c->d->n - 1 - c->run].n;
	}
	c->left--;
	return c->d->v[c->d->n - 1 - c->run].us;
}

struct dpc_chart {
	struct dpc_opts o;
	struct trace_series *t;
	size_t n;
};

struct dpc_chart *
dpc_chart_new(const struct dpc_opts *o)
{
	struct dpc_chart *c = xcalloc(1, sizeof(*c));

	c->o = *o;
	return c;
}

int
dpc_chart_add_trace(struct dpc_chart *c, const char *path, const char *label)
{
	struct dpc_opts o = c->o;
	struct dpc_stats *s;
	struct trace_series *ts;
	size_t i;
	int r;

	if (!o.want_isr || !o.want_dpc) {
		/* explicit --dpc or --isr */
	} else
		o.want_isr = 0;	/* the chart is about DPCs unless --isr */
	s = dpc_new(&o);
	s->want_samples = 0;
	r = dpc_read(s, path);
	if (r == EXIT_FATAL) {
		dpc_free(s);
		return r;
	}
	c->t = xrealloc(c->t, (c->n + 1) * sizeof(*c->t));
	ts = &c->t[c->n++];
	ts->label = xstrdup(label ? label : (s->source ? s->source : path));
	memset(&ts->d, 0, sizeof(ts->d));
	for (i = 0; i < s->mods.n; i++) {
		struct dpc_row *m = s->mods.r[i];
		size_t k;

		if (strcasecmp(m->module, o.module) != 0)
			continue;
		for (k = 0; k < m->dur.n; k++)
			dpc_durs_add(&ts->d, m->dur.v[k].us, m->dur.v[k].n);
	}
	dpc_durs_sort(&ts->d);
	ts->n = (size_t)ts->d.total;
	if (ts->n == 0)
		cli_warn("%s: no %s of module %s", path, o.want_isr && !o.want_dpc ? "ISRs" : "DPCs",
		    o.module);
	dpc_free(s);
	return r;
}

static const char *const series_colours[] = {
	"#d62728", "#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
	"#e377c2", "#17becf", "#7f7f7f", "#bcbd22"
};

void
dpc_chart_write(struct dpc_chart *c, struct outbuf *ob)
{
	double W = c->o.width, H = c->o.height;
	double ml = 80, mr = 30, mt = 60, mb = 60 + 18.0 * (double)c->n;
	double pw = W - ml - mr, ph = H - mt - mb;
	double ymax = c->o.dpc_limit_us * 1.2, ymin = c->o.log_y ? 1e9 : 0;
	double limit = c->o.want_isr && !c->o.want_dpc ? c->o.isr_limit_us : c->o.dpc_limit_us;
	size_t i, k;
	int tick;

	if (ph < 50)
		ph = 50, H = mt + mb + ph;
	for (i = 0; i < c->n; i++)
		for (k = 0; k < c->t[i].d.n; k++) {
			double v = c->t[i].d.v[k].us;

			if (v > ymax)
				ymax = v;
			if (c->o.log_y && v > 0 && v < ymin)
				ymin = v;
		}
	if (c->o.log_y) {
		ymin = ymin > limit ? limit / 2 : ymin;
		if (ymin > 1e8)
			ymin = 1;
		ymin = pow(10, floor(log10(ymin)));
		ymax = pow(10, ceil(log10(ymax)));
	} else {
		/* a round top: 1, 2 or 5 times a power of ten */
		double p = pow(10, floor(log10(ymax))), m = ymax / p;

		ymax = (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
	}
#define YPOS(v) (c->o.log_y ? mt + ph - ph * (log10((v) > ymin ? (v) : ymin) - log10(ymin)) / \
	    (log10(ymax) - log10(ymin)) : mt + ph - ph * (v) / ymax)
	ob_printf(ob, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
	    "<svg version=\"1.1\" width=\"%g\" height=\"%g\" viewBox=\"0 0 %g %g\" "
	    "xmlns=\"http://www.w3.org/2000/svg\">\n", W, H, W, H);
	ob_puts(ob, "<style>text{font-family:Verdana,sans-serif;font-size:12px}"
	    ".t{font-size:17px;text-anchor:middle}.ax{stroke:#000;stroke-width:1}"
	    ".g{stroke:#ddd;stroke-width:1}.lim{stroke:#c00;stroke-width:1.5;stroke-dasharray:6,4}"
	    "polyline{fill:none;stroke-width:1.5}</style>\n");
	ob_printf(ob, "<rect width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n"
	    "<text class=\"t\" x=\"%g\" y=\"28\">", W / 2);
	ob_puts(ob, c->o.want_isr && !c->o.want_dpc ? "ISR" : "DPC");
	ob_puts(ob, " durations of ");
	xml_escape_str(ob, c->o.module);
	ob_puts(ob, ", sorted (longest first)</text>\n");
	/* axes and grid */
	for (tick = 0; tick <= 10; tick++) {
		double x = ml + pw * tick / 10;

		ob_printf(ob, "<line class=\"g\" x1=\"%.1f\" y1=\"%g\" x2=\"%.1f\" y2=\"%g\"/>"
		    "<text x=\"%.1f\" y=\"%g\" text-anchor=\"middle\">%d%%</text>\n",
		    x, mt, x, mt + ph, x, mt + ph + 16, tick * 10);
	}
	if (c->o.log_y) {
		double v;

		for (v = ymin; v <= ymax * 1.0001; v *= 10)
			ob_printf(ob, "<line class=\"g\" x1=\"%g\" y1=\"%.1f\" x2=\"%g\" y2=\"%.1f\"/>"
			    "<text x=\"%g\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n",
			    ml, YPOS(v), ml + pw, YPOS(v), ml - 6, YPOS(v) + 4, v);
	} else
		for (tick = 0; tick <= 5; tick++) {
			double v = ymax * tick / 5;

			ob_printf(ob, "<line class=\"g\" x1=\"%g\" y1=\"%.1f\" x2=\"%g\" y2=\"%.1f\"/>"
			    "<text x=\"%g\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n",
			    ml, YPOS(v), ml + pw, YPOS(v), ml - 6, YPOS(v) + 4, v);
		}
	ob_printf(ob, "<line class=\"ax\" x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\"/>"
	    "<line class=\"ax\" x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\"/>\n",
	    ml, mt, ml, mt + ph, ml, mt + ph, ml + pw, mt + ph);
	ob_printf(ob, "<text x=\"%g\" y=\"%g\" text-anchor=\"middle\">share of the module's %ss "
	    "(sorted by duration)</text>\n", ml + pw / 2, mt + ph + 34,
	    c->o.want_isr && !c->o.want_dpc ? "ISR" : "DPC");
	ob_printf(ob, "<text x=\"18\" y=\"%g\" text-anchor=\"middle\" transform=\"rotate(-90 18 %g)\">"
	    "duration (us)%s</text>\n", mt + ph / 2, mt + ph / 2, c->o.log_y ? ", log scale" : "");
	/* series: at most two points per pixel column (the data is monotonic) */
	for (i = 0; i < c->n; i++) {
		struct trace_series *t = &c->t[i];
		struct desc_cursor cur;
		long lastcol = -1;

		if (t->n == 0)
			continue;
		cursor_init(&cur, &t->d);
		ob_printf(ob, "<polyline id=\"s%zu\" stroke=\"%s\" points=\"", i,
		    series_colours[i % 10]);
		for (k = 0; k < t->n; k++) {
			double x = ml + (t->n == 1 ? 0 : pw * (double)k / (double)(t->n - 1));
			double v = cursor_next(&cur);
			long col = (long)x;

			if (col == lastcol && k + 1 < t->n &&
			    (long)(ml + pw * (double)(k + 1) / (double)(t->n - 1)) == col)
				continue;
			lastcol = col;
			ob_printf(ob, "%.1f,%.1f ", x, YPOS(v));
		}
		ob_puts(ob, "\"/>\n");
	}
	/* the guidance line */
	ob_printf(ob, "<line class=\"lim\" x1=\"%g\" y1=\"%.1f\" x2=\"%g\" y2=\"%.1f\"/>"
	    "<text x=\"%g\" y=\"%.1f\" text-anchor=\"end\" fill=\"#c00\">%g us guidance</text>\n",
	    ml, YPOS(limit), ml + pw, YPOS(limit), ml + pw - 4, YPOS(limit) - 4, limit);
	/* legend */
	for (i = 0; i < c->n; i++) {
		struct trace_series *t = &c->t[i];
		double y = mt + ph + 52 + 18.0 * (double)i, sum = 0, longest = 0;
		size_t over = 0;
		struct desc_cursor cur;

		/* summed longest first, one by one, as the chart has always added them */
		cursor_init(&cur, &t->d);
		for (k = 0; k < t->n; k++) {
			double v = cursor_next(&cur);

			if (k == 0)
				longest = v;
			sum += v;
			over += v > limit;
		}
		ob_printf(ob, "<line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" stroke=\"%s\" stroke-width=\"3\"/>"
		    "<text x=\"%g\" y=\"%g\">", ml, y - 4, ml + 24, y - 4, series_colours[i % 10], ml + 30, y);
		xml_escape_str(ob, t->label);
		ob_printf(ob, ": %zu %ss, avg %.1f us, max %.1f us, %.1f%% over %g us</text>\n",
		    t->n, c->o.want_isr && !c->o.want_dpc ? "ISR" : "DPC",
		    t->n ? sum / (double)t->n : 0, longest,
		    t->n ? 100.0 * (double)over / (double)t->n : 0, limit);
	}
	ob_puts(ob, "</svg>\n");
#undef YPOS
}

void
dpc_chart_free(struct dpc_chart *c)
{
	size_t i;

	if (c == NULL)
		return;
	for (i = 0; i < c->n; i++) {
		free(c->t[i].label);
		dpc_durs_free(&c->t[i].d);
	}
	free(c->t);
	free(c);
}
