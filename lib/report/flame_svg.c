/*
 * flame_svg.c - the flame graph's SVG writer: header, CSS, the embedded
 * script, the title and button texts, and one <g> per box.
 *
 * The SVG is compact: per box one <g> with the full name in <title>, a
 * <rect> carrying the weight in "v" (and the delta in "d"), and a
 * <text> only when a label fits.  Tooltip text (weight, percent with
 * thousands separators) is computed by the embedded script on hover,
 * so it is not repeated per box.  Names are written only through
 * xml_escape(), never into the script.
 */
#include "report/flame_int.h"
#include "base/cli.h"
#include "base/escape.h"
#include "report/numfmt.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Writes V/10 as "12.3" or "12". */
static void
put_tenths(struct outbuf *ob, int64_t v)
{
	uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
	char *o = ob_reserve(ob, 24);
	size_t n = 0;

	if (v < 0)
		o[n++] = '-';
	n += (size_t)evt_format_u64(o + n, u / 10);
	if (u % 10) {
		o[n++] = '.';
		o[n++] = (char)('0' + u % 10);
	}
	ob_commit(ob, n);
}

/*
 * fmt_num's text for V.  Its integral case ("%.0f", the weight of
 * every box) is written here without printf, which was a third of the
 * time of a small graph: the same digits, "-" for negative values and
 * for -0 as printf writes it.
 */
static void
put_num(struct outbuf *ob, double v)
{
	char tmp[64];
	int n = 0;

	if (v == floor(v) && fabs(v) < 9e15) {
		if (signbit(v))
			tmp[n++] = '-';
		n += evt_format_u64(tmp + n, (uint64_t)fabs(v));
	} else
		n = fmt_num(tmp, v);
	ob_write(ob, tmp, (size_t)n);
}

/* Only characters that cannot break out of a CSS value. */
static void
put_css_safe(struct outbuf *ob, const char *s)
{
	for (; *s; s++)
		if ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		    (*s >= '0' && *s <= '9') || strchr(" ,-_.", *s))
			ob_putc(ob, *s);
}

/*
 * The embedded script.  It reads names only from the DOM (title text),
 * so nothing from the trace is ever parsed as code.  Exposes
 * fg_search(re), fg_zoom(name|index), fg_unzoom(), fg_boxes() for
 * tests; ?s=REGEX and ?x=&y= in the URL search and zoom on load.
 */
static const char flame_js[] =
"(function(){'use strict';\n"
"var NS='http://www.w3.org/2000/svg',svg,fr,W,xp,fs,fw,inv,total,cn,fac,diff,nt,ty,"
"det,mt,unz,boxes=[],zoomed=null,term=null,ic=false,sc;\n"
"function $(id){return document.getElementById(id);}\n"
"function fmt(v){v=Math.round(v*1000)/1000;var s=String(v);if(s.indexOf('e')>=0)return s;"
"var p=s.split('.');p[0]=p[0].replace(/\\B(?=(\\d{3})+(?!\\d))/g,',');return p.join('.');}\n"
"function pct(v){return total>0?(100*v/total).toFixed(2):'0.00';}\n"
"function info(b){var s=b.n+' ('+fmt(b.v*fac)+' '+cn+', '+pct(b.v)+'%';"
"if(b.d!==null)s+='; '+(b.d>=0?'+':'')+pct(b.d)+'%';return s+')';}\n"
"function label(b,x,w){var c=Math.floor(w/(fs*fw)),s='';"
"if(c>=3)s=b.n.length<=c?b.n:b.n.substr(0,c-2)+'..';"
"if(!b.t&&s){b.t=document.createElementNS(NS,'text');b.t.setAttribute('y',b.y+ty);b.g.appendChild(b.t);}"
"if(b.t){b.t.setAttribute('x',(x+3).toFixed(1));b.t.textContent=s;}}\n"
"function place(b,x,w){b.r.setAttribute('x',x.toFixed(1));b.r.setAttribute('width',w.toFixed(1));"
"label(b,x,w);b.g.removeAttribute('display');}\n"
"function hide(b){b.g.setAttribute('display','none');}\n"
"function url(){try{var q=[];if(zoomed)q.push('x='+zoomed.x,'y='+zoomed.y);if(term)q.push('s='+encodeURIComponent(term));"
"history.replaceState(null,'',location.pathname+(q.length?'?'+q.join('&'):''));}catch(x){}}\n"
"function zoom(z){var sc2=(W-2*xp)/z.w,e=0.05,i,b,up;zoomed=z;unz.removeAttribute('display');"
"for(i=0;i<boxes.length;i++){b=boxes[i];up=inv?b.y<z.y:b.y>z.y;"
"if(up){if(b.x<=z.x+e&&b.x+b.w>=z.x+z.w-e){place(b,xp,W-2*xp);b.g.setAttribute('opacity','0.5');}else hide(b);}"
"else if(b.x>=z.x-e&&b.x+b.w<=z.x+z.w+e){place(b,xp+(b.x-z.x)*sc2,b.w*sc2);b.g.removeAttribute('opacity');}"
"else hide(b);}"
"svg.setAttribute('fg-zoom',z.n);url();}\n"
"function unzoom(){var i,b;zoomed=null;unz.setAttribute('display','none');"
"for(i=0;i<boxes.length;i++){b=boxes[i];place(b,b.x,b.w);b.g.removeAttribute('opacity');}"
"svg.removeAttribute('fg-zoom');url();}\n"
"function reset(){var i;term=null;for(i=0;i<boxes.length;i++)boxes[i].r.setAttribute('fill',boxes[i].f);"
"mt.textContent=' ';svg.removeAttribute('fg-matched');url();}\n"
"function search(t){var re,i,b,m=[],end=-1,sum=0;if(t===null||t===undefined||t===''){reset();return null;}"
"try{re=new RegExp(t,ic?'i':'');}catch(x){mt.textContent='Bad regex: '+x.message;return null;}"
"term=t;for(i=0;i<boxes.length;i++){b=boxes[i];if(re.test(b.n)){b.r.setAttribute('fill',sc);m.push(b);}"
"else b.r.setAttribute('fill',b.f);}"
"m.sort(function(a,c){return a.x-c.x||c.w-a.w;});"
"for(i=0;i<m.length;i++){b=m[i];if(b.x>=end-0.05){sum+=b.v;end=b.x+b.w;}}"
"var p=total>0?(100*sum/total).toFixed(1):'0.0';mt.textContent='Matched: '+p+'%';"
"svg.setAttribute('fg-matched',p);url();return +p;}\n"
"function box(ev){var g=ev.target;while(g&&g.parentNode!==fr)g=g.parentNode;return g&&g.fgi!==undefined?boxes[g.fgi]:null;}\n"
"function init(){var i,g,r,ti,gs,p;svg=document.documentElement;fr=$('frames');"
"W=+svg.getAttribute('width');xp=+fr.getAttribute('xpad');fs=+fr.getAttribute('fs');fw=+fr.getAttribute('fw');"
"ty=+fr.getAttribute('ty');inv=fr.getAttribute('inv')==='1';total=+fr.getAttribute('total');"
"cn=fr.getAttribute('cname');fac=+fr.getAttribute('factor')||1;nt=fr.getAttribute('ntype');sc=fr.getAttribute('sc');"
"det=$('details');mt=$('matched');unz=$('unzoom');gs=fr.children;"
"for(i=0;i<gs.length;i++){g=gs[i];r=g.getElementsByTagName('rect')[0];ti=g.getElementsByTagName('title')[0];"
"if(!r)continue;g.fgi=boxes.length;boxes.push({g:g,r:r,ti:ti,t:g.getElementsByTagName('text')[0]||null,"
"n:ti?ti.textContent:'',x:+r.getAttribute('x'),w:+r.getAttribute('width'),y:+r.getAttribute('y'),"
"v:+r.getAttribute('v'),d:r.hasAttribute('d')?+r.getAttribute('d'):null,f:r.getAttribute('fill')});}"
"fr.addEventListener('mouseover',function(ev){var b=box(ev);if(!b)return;var s=info(b);"
"if(b.ti)b.ti.textContent=s;det.textContent=nt+' '+s;});"
"fr.addEventListener('mouseout',function(ev){var b=box(ev);if(b&&b.ti)b.ti.textContent=b.n;det.textContent=' ';});"
"fr.addEventListener('click',function(ev){var b=box(ev);if(b)zoom(b);});"
"unz.addEventListener('click',unzoom);"
"$('search').addEventListener('click',function(){search(prompt('Enter a search term (regexp allowed, eg: ^ntdll)',term||''));});"
"$('ic').addEventListener('click',function(){ic=!ic;$('ic').setAttribute('fill',ic?'#000':'#aaa');if(term)search(term);});"
"document.addEventListener('keydown',function(ev){if(ev.keyCode===114||(ev.ctrlKey&&ev.keyCode===70)){ev.preventDefault();"
"search(prompt('Enter a search term (regexp allowed, eg: ^ntdll)',term||''));}"
"else if(ev.ctrlKey&&ev.keyCode===73){ev.preventDefault();ic=!ic;if(term)search(term);}"
"else if(ev.keyCode===27){reset();unzoom();}});"
"window.fg_search=search;window.fg_unzoom=unzoom;window.fg_boxes=function(){return boxes;};"
"window.fg_info=info;"
"window.fg_zoom=function(k){for(var j=0;j<boxes.length;j++)if(j===k||boxes[j].n===k){zoom(boxes[j]);return true;}return false;};"
"try{p=new URLSearchParams(location.search);"
"if(p.get('x')!==null&&p.get('y')!==null){var qx=+p.get('x'),qy=+p.get('y');"
"for(i=0;i<boxes.length;i++){g=boxes[i];if(g.y===qy&&qx>=g.x&&qx<g.x+g.w){zoom(g);break;}}}"
"if(p.get('s'))search(p.get('s'));}catch(x){}"
"svg.setAttribute('fg-ready','1');}\n"
"window.addEventListener('load',init);})();\n";

/* What the box writer needs besides the tree. */
struct emit_ctx {
	struct flame *f;
	struct outbuf *ob;
	const struct flame_layout *l;
	double imgheight, ypad1, ypad2;
	/*
	 * A palette's colour depends on the name only: worked out once per
	 * name (by interned id; 0 = not yet, else 1 << 24 | rgb), not per box.
	 */
	uint32_t *colour;
};

static void
box_colour(struct emit_ctx *c, uint32_t id, const char *name, size_t len,
    unsigned char rgb[3])
{
	struct flame *f = c->f;

	if (f->is_diff) {
		flame_diff_colour(f->o.diffmode == FLAME_DIFF_INCLUSIVE ?
		    f->delta[id].total : f->delta[id].self, c->l->maxdelta,
		    f->o.negate, rgb);
		return;
	}
	if (f->pal) {
		flame_palfile_colour(f->pal, f->o.palette, name, len, rgb);
		return;
	}
	if (id != 0 && c->colour != NULL) {
		uint32_t *k = &c->colour[f->nodes[id].name];

		if (*k == 0) {
			flame_color(f->o.palette, name, len, rgb);
			*k = 1u << 24 | (uint32_t)rgb[0] << 16 | (uint32_t)rgb[1] << 8 | rgb[2];
		}
		rgb[0] = (unsigned char)(*k >> 16);
		rgb[1] = (unsigned char)(*k >> 8);
		rgb[2] = (unsigned char)*k;
		return;
	}
	flame_color(f->o.palette, name, len, rgb);
}

static void
emit_box(struct emit_ctx *c, uint32_t id, double x)
{
	struct flame *f = c->f;
	struct fnode *n = &f->nodes[id];
	struct outbuf *ob = c->ob;
	size_t len;
	const char *name = flame_node_name(f, id, &len);
	size_t shown = len;
	int64_t x1, x2;
	double y, wpx;
	unsigned char rgb[3];
	char col[7];
	size_t chars;

	if (id && flame_annotation(name, len))
		shown = len - 4;
	/* round both ends, so a child never pokes out of its parent */
	x1 = llround((10 + x * c->l->wpu) * 10);
	x2 = llround((10 + (x + n->total) * c->l->wpu) * 10);
	if (f->o.inverted)
		y = c->ypad1 + n->depth * f->o.frameheight;
	else
		y = c->imgheight - c->ypad2 - (n->depth + 1) * f->o.frameheight;
	box_colour(c, id, name, len, rgb);
	col[0] = '#';
	for (int k = 0; k < 3; k++) {
		col[1 + 2 * k] = "0123456789abcdef"[rgb[k] >> 4];
		col[2 + 2 * k] = "0123456789abcdef"[rgb[k] & 15];
	}
	ob_lit(ob, "<g><title>");
	xml_escape(ob, name, shown);
	ob_lit(ob, "</title><rect x=\"");
	put_tenths(ob, x1);
	ob_lit(ob, "\" y=\"");
	put_tenths(ob, llround(y * 10));
	ob_lit(ob, "\" width=\"");
	put_tenths(ob, x2 - x1);
	ob_lit(ob, "\" height=\"");
	put_tenths(ob, llround((f->o.frameheight - 1) * 10));
	ob_lit(ob, "\" fill=\"");
	ob_write(ob, col, sizeof(col));
	ob_lit(ob, "\" v=\"");
	put_num(ob, n->total);
	if (f->is_diff) {
		ob_lit(ob, "\" d=\"");
		put_num(ob, f->o.diffmode == FLAME_DIFF_INCLUSIVE ? f->delta[id].total :
		    f->delta[id].self);
	}
	ob_lit(ob, "\"/>");
	wpx = (double)(x2 - x1) / 10;
	chars = (size_t)(wpx / (f->o.fontsize * f->o.fontwidth));
	if (chars >= 3) {
		/* counted only as far as the label needs */
		size_t nch = utf8_chars(name, utf8_prefix(name, shown, chars + 1));

		ob_lit(ob, "<text x=\"");
		put_tenths(ob, x1 + 30);
		ob_lit(ob, "\" y=\"");
		put_tenths(ob, llround((y + f->o.frameheight / 2 + f->o.fontsize / 2 - 3.5) * 10));
		ob_lit(ob, "\">");
		if (nch <= chars)
			xml_escape(ob, name, shown);
		else {
			xml_escape(ob, name, utf8_prefix(name, shown, chars - 2));
			ob_lit(ob, "..");
		}
		ob_lit(ob, "</text>");
	}
	ob_lit(ob, "</g>\n");
}

static void
svg_head(struct outbuf *ob, const struct flame_opts *o, double h, const char *bg1,
    const char *bg2)
{
	ob_puts(ob, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
	    "<!DOCTYPE svg PUBLIC \"-//W3C//DTD SVG 1.1//EN\" "
	    "\"http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd\">\n<svg version=\"1.1\" width=\"");
	put_num(ob, o->width);
	ob_puts(ob, "\" height=\"");
	put_num(ob, h);
	ob_puts(ob, "\" viewBox=\"0 0 ");
	put_num(ob, o->width);
	ob_putc(ob, ' ');
	put_num(ob, h);
	ob_puts(ob, "\" xmlns=\"http://www.w3.org/2000/svg\" "
	    "xmlns:xlink=\"http://www.w3.org/1999/xlink\">\n");
	ob_puts(ob, "<!-- Flame graph by etlkit render; see docs/render.1 -->\n");
	if (o->notes) {
		ob_puts(ob, "<desc id=\"notes\">");
		xml_escape_str(ob, o->notes);
		ob_puts(ob, "</desc>\n");
	}
	ob_printf(ob, "<defs><linearGradient id=\"bg\" y1=\"0\" y2=\"1\" x1=\"0\" x2=\"0\">"
	    "<stop stop-color=\"%s\" offset=\"5%%\"/><stop stop-color=\"%s\" offset=\"95%%\"/>"
	    "</linearGradient></defs>\n", bg1, bg2);
	ob_puts(ob, "<style type=\"text/css\"><![CDATA[\ntext{font-family:");
	put_css_safe(ob, o->fonttype);
	ob_printf(ob, ",sans-serif;font-size:%gpx;fill:#000}\n#title{text-anchor:middle;font-size:%gpx}\n"
	    "#subtitle{text-anchor:middle;fill:#a0a0a0}\n"
	    "#frames text{pointer-events:none}\n#frames g:hover rect{stroke:#000;stroke-width:0.5;cursor:pointer}\n"
	    ".btn{cursor:pointer}\n.btn:hover{opacity:0.7}\n]]></style>\n",
	    o->fontsize, o->fontsize + 5);
	ob_puts(ob, "<script type=\"text/ecmascript\"><![CDATA[\n");
	ob_puts(ob, flame_js);
	ob_puts(ob, "]]></script>\n");
	ob_puts(ob, "<rect x=\"0\" y=\"0\" width=\"100%\" height=\"100%\" fill=\"url(#bg)\"/>\n");
}

static const char *
default_title(const struct flame_opts *o)
{
	if (o->title)
		return o->title;
	if (o->flamechart)
		return "Flame Chart";
	if (o->inverted)
		return "Icicle Graph";
	return "Flame Graph";
}

static void
svg_texts(struct outbuf *ob, const struct flame_opts *o, double h)
{
	double w = o->width;

	ob_printf(ob, "<text id=\"title\" x=\"%g\" y=\"%g\">", w / 2, o->fontsize * 2);
	xml_escape_str(ob, default_title(o));
	ob_puts(ob, "</text>\n");
	if (o->subtitle) {
		ob_printf(ob, "<text id=\"subtitle\" x=\"%g\" y=\"%g\">", w / 2, o->fontsize * 4);
		xml_escape_str(ob, o->subtitle);
		ob_puts(ob, "</text>\n");
	}
	ob_printf(ob, "<text id=\"details\" x=\"10\" y=\"%g\"> </text>\n", h - o->fontsize / 2 - 5);
	ob_printf(ob, "<text id=\"unzoom\" class=\"btn\" x=\"10\" y=\"%g\" display=\"none\">Reset Zoom</text>\n",
	    o->fontsize * 2);
	ob_printf(ob, "<text id=\"search\" class=\"btn\" x=\"%g\" y=\"%g\">Search</text>\n",
	    w - 110, o->fontsize * 2);
	ob_printf(ob, "<text id=\"ic\" class=\"btn\" x=\"%g\" y=\"%g\" fill=\"#aaa\">ic</text>\n",
	    w - 26, o->fontsize * 2);
	ob_printf(ob, "<text id=\"matched\" x=\"%g\" y=\"%g\"> </text>\n", w - 110,
	    h - o->fontsize / 2 - 5);
}

int
flame_write_svg(struct flame *f, struct outbuf *ob)
{
	struct emit_ctx c;
	struct flame_layout l;
	const char *bg1, *bg2;
	double ypad1, ypad2, h;
	size_t i;

	memset(&c, 0, sizeof(c));
	c.f = f;
	c.ob = ob;
	c.l = &l;
	if (flame_layout(f, &l) < 0) {
		/* what flamegraph.pl does with no valid input */
		h = 60;
		flame_background(&f->o, 0, &bg1, &bg2);
		ob_puts(ob, "<?xml version=\"1.0\" standalone=\"no\"?>\n<svg version=\"1.1\" width=\"");
		put_num(ob, f->o.width);
		ob_puts(ob, "\" height=\"60\" xmlns=\"http://www.w3.org/2000/svg\">\n");
		ob_printf(ob, "<text x=\"%g\" y=\"30\" text-anchor=\"middle\" font-size=\"17\">"
		    "ERROR: No valid input provided to flame graph</text>\n</svg>\n", f->o.width / 2);
		return -1;
	}
	ypad1 = f->o.fontsize * 3 + (f->o.subtitle ? f->o.fontsize * 2 : 0);
	ypad2 = f->o.fontsize * 2 + 10;
	h = (l.maxdepth + 1) * f->o.frameheight + ypad1 + ypad2;
	c.imgheight = h;
	c.ypad1 = ypad1;
	c.ypad2 = ypad2;
	flame_background(&f->o, f->is_diff, &bg1, &bg2);
	svg_head(ob, &f->o, h, bg1, bg2);
	svg_texts(ob, &f->o, h);
	ob_puts(ob, "<g id=\"frames\" xpad=\"10\" fs=\"");
	put_num(ob, f->o.fontsize);
	ob_puts(ob, "\" fw=\"");
	put_num(ob, f->o.fontwidth);
	ob_puts(ob, "\" ty=\"");
	put_num(ob, f->o.frameheight / 2 + f->o.fontsize / 2 - 3.5);
	ob_puts(ob, "\" inv=\"");
	ob_putc(ob, f->o.inverted ? '1' : '0');
	ob_puts(ob, "\" total=\"");
	put_num(ob, l.total);
	ob_puts(ob, "\" factor=\"");
	put_num(ob, f->o.factor);
	ob_puts(ob, "\" cname=\"");
	xml_escape_str(ob, f->o.countname);
	ob_puts(ob, "\" ntype=\"");
	xml_escape_str(ob, f->o.nametype);
	ob_puts(ob, "\" sc=\"");
	ob_puts(ob, flame_valid_hex_colour(f->o.searchcolor) ? f->o.searchcolor : "#e600e6");
	if (f->is_diff)
		ob_puts(ob, f->o.diffmode == FLAME_DIFF_INCLUSIVE ? "\" diff=\"inclusive" : "\" diff=\"leaf");
	ob_puts(ob, "\">\n");
	if (!f->is_diff && f->pal == NULL)
		c.colour = xcalloc(f->names.n ? f->names.n : 1, sizeof(*c.colour));
	for (i = 0; i < l.nbox; i++)
		emit_box(&c, l.box[i].id, l.box[i].x);
	free(c.colour);
	flame_layout_free(&l);
	ob_puts(ob, "</g>\n</svg>\n");
	if (f->pal)
		flame_palfile_save(f->pal, f->o.palette_file);
	return 0;
}
