/* gmemprof memory timeline page: decodes the JSON model (tl_html.c) and
 * draws each lane on a canvas. Bands are stacked in allocation order: at
 * any moment the live bands sit on one another, the oldest at the bottom,
 * so the top of the stack is the live level and a free lets the younger
 * bands above it drop. Each pixel column shows one moment: the allocation
 * in it that left the most memory live (or its middle when none), and the
 * peak's own moment in the peak's column, so that peaks are not skipped.
 * With the PyTorch bridge's layers (L.fw) the bands are tensors; the
 * reserved segments are painted first, light, stacked from 0 in allocation
 * order with a line at each one's top, so that the tensors cover them and
 * the reserve shows above the tensors where it holds memory no tensor
 * uses; the allocations outside the allocator are hatched and stacked on
 * the higher of the reserve and the tensors. Coloured by category
 * (D.stack: the bridge's default), the live bands of a column stack by
 * category instead (parameter at the bottom, as torch.profiler's memory
 * timeline), each category's merged small allocations on its own bands
 * where the column's total is exact (L.split). */
(function () {
  'use strict';
  var errors = [];
  window.addEventListener('error', function (e) { errors.push(String(e.message)); });
  var D = JSON.parse(document.getElementById('gmem-data').textContent);
  var S = D.names;
  var ML = 74, MR = 12, MT = 22, MB = 44, LANE_H = 300;

  function fmtB(b) {
    var u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'], i = 0;
    while (b >= 1024 && i < 4) { b /= 1024; i++; }
    return (i ? b.toFixed(2) : b.toFixed(0)) + ' ' + u[i];
  }
  function fmtT(ns) { return (ns / 1e6).toFixed(3) + ' ms'; }
  function fmtD(ns) {
    if (ns < 1e3) return ns.toFixed(0) + ' ns';
    if (ns < 1e6) return (ns / 1e3).toFixed(1) + ' us';
    if (ns < 1e9) return (ns / 1e6).toFixed(2) + ' ms';
    return (ns / 1e9).toFixed(3) + ' s';
  }
  function hex(a) { return '0x' + a.toString(16); }
  function rgba(c, alpha) {
    var r = parseInt(c.substr(1, 2), 16), g = parseInt(c.substr(3, 2), 16), b = parseInt(c.substr(5, 2), 16);
    /* little-endian ImageData words: A B G R */
    return ((alpha << 24) | (b << 16) | (g << 8) | r) >>> 0;
  }
  function upper(arr, n, v) { /* first index with arr[i] > v */
    var lo = 0, hi = n;
    while (lo < hi) { var m = (lo + hi) >> 1; if (arr[m] <= v) lo = m + 1; else hi = m; }
    return lo;
  }
  function colorOf(o) { var c = colorMap[o]; return c === undefined ? D.ncolors : c; }

  D.colorOf = {};
  D.lanes.forEach(function (L) { L.legend.forEach(function (e, i) { D.colorOf[e[0]] = i; }); });
  var colorMap = D.colorOf;
  var COL = D.colors.map(function (c) { return rgba(c, 255); }), COLM = D.colors.map(function (c) { return rgba(c, 120); });
  /* the merged small allocations, the range a total may take within a
   * bucket, the highest total within a column and its lowest */
  var MERGED_CSS = '#8c8c8c', MERGEDC = rgba(MERGED_CSS, 200), RANGEC = rgba('#f4a582', 200), ENVC = rgba('#bdbdbd', 70),
    LOWC = rgba('#000000', 255);
  /* the framework layers: reserved segments light with a darker top line,
   * outside the allocator hatched */
  var SEG_CSS = '#9ecae1', SEG_EDGE_CSS = '#3182bd', OUT_CSS = ['#525252', '#d9d9d9'];
  var SEGC = rgba(SEG_CSS, 150), SEGE = rgba(SEG_EDGE_CSS, 255), OUTC = OUT_CSS.map(function (c) { return rgba(c, 235); });

  function decode(L) {
    var n = L.n, i;
    var t0 = new Float64Array(n), t1 = new Float64Array(n), sz = new Float64Array(n), ad = new Float64Array(n);
    var own = new Int32Array(n), kn = new Int32Array(n), rn = new Int32Array(n), st = new Float64Array(n);
    var ly = new Int32Array(n), lv = new Float64Array(n);
    /* the bridge's columns: 0 ("") in a lane that lacks one (a diff of a bridge trace and another) */
    var fc = D.fwcols ? { cat: L.cat || D.keys.some(function (k) { return k[1] === 'cat'; }) ? new Int32Array(n) : null,
                          mod: new Int32Array(n), op: new Int32Array(n), ln: new Int32Array(n) } : null;
    var t = L.t0base || 0, a = 0, s = 0;
    for (i = 0; i < n; i++) {
      t += L.t0[i]; a += L.ad[i]; s += L.st[i];
      t0[i] = t; t1[i] = L.dur[i] < 0 ? Infinity : t + L.dur[i];
      sz[i] = L.sz[i]; ad[i] = a; st[i] = s;
      own[i] = L.own[i]; kn[i] = L.kn[i]; rn[i] = L.rn[i]; ly[i] = L.ly[i];
      if (fc && L.mod) { if (L.cat) fc.cat[i] = L.cat[i]; fc.mod[i] = L.mod[i]; fc.op[i] = L.op[i]; fc.ln[i] = L.ln[i]; }
    }
    /* live level (bands drawn) right after each allocation */
    var order = new Int32Array(n);
    for (i = 0; i < n; i++) order[i] = i;
    order.sort(function (x, y) { return t1[x] - t1[y] || x - y; });
    var live = 0, f = 0, ymax = 0;
    for (i = 0; i < n; i++) {
      while (f < n && t1[order[f]] <= t0[i]) { if (order[f] < i) live -= sz[order[f]]; f++; }
      live += sz[i];
      lv[i] = live;
      if (live > ymax) ymax = live;
    }
    var k;
    /* the bands drawn, as a step function: their level after each distinct time */
    var ev = [];
    for (i = 0; i < n; i++) { ev.push([t0[i], sz[i]]); if (t1[i] !== Infinity) ev.push([t1[i], -sz[i]]); }
    ev.sort(function (x, y) { return x[0] - y[0]; });
    var kt = [], kv = [], kl = 0;
    for (k = 0; k < ev.length; k++) {
      kl += ev[k][1];
      if (kt.length && kt[kt.length - 1] === ev[k][0]) kv[kv.length - 1] = kl; else { kt.push(ev[k][0]); kv.push(kl); }
    }
    /* the summary of the lane's whole live total (tl_model.h): buckets of times */
    var Sm = L.sum, nb = Sm.t.length, sf = new Float64Array(nb), sl = new Float64Array(nb), se = new Float64Array(nb),
      slo = new Float64Array(nb), shi = new Float64Array(nb), pt = 0, pe = 0;
    for (k = 0; k < nb; k++) {
      sf[k] = pt + Sm.t[k]; sl[k] = sf[k] + Sm.w[k]; se[k] = pe + Sm.e[k]; slo[k] = se[k] - Sm.lo[k]; shi[k] = se[k] + Sm.hi[k];
      pt = sl[k]; pe = se[k];
      if (shi[k] > ymax) ymax = shi[k];
    }
    var sum = { n: nb, f: sf, l: sl, e: se, lo: slo, hi: shi, per: Sm.per };
    /* the merged bytes of each colour at each bucket's end (tl_html.c's split) */
    var split = null;
    if (L.split) {
      split = {};
      L.split.g.forEach(function (g, q) {
        var v = new Float64Array(nb), acc = 0, d = L.split.v[q];
        for (k = 0; k < nb; k++) { acc += d[k]; v[k] = acc; }
        split[g] = v;
      });
    }
    if (L.peak && L.peak.bytes > ymax) ymax = L.peak.bytes;
    var fw = L.fw ? { seg: decodeCtx(L.fw.seg, L.t0base), out: decodeCtx(L.fw.out, L.t0base) } : null, yall = ymax;
    if (fw) {
      /* the layers are the device's memory: "all layers" scales to their top and the driver's line */
      yall = Math.max(yall, ctxTop(fw));
      L.drv.forEach(function (q) { if (q[1] > yall) yall = q[1]; });
      if (L.peak) { fw.segPeak = ctxAt(fw.seg, L.peak.t); fw.outPeak = ctxAt(fw.out, L.peak.t); }
    }
    /* bytes at the peak per owner, from the bands themselves */
    var atPeak = {}, peakPos = 0;
    if (L.peak) {
      peakPos = upper(t0, n, L.peak.t);
      for (i = 0; i < peakPos; i++)
        if (t1[i] > L.peak.t) atPeak[own[i]] = (atPeak[own[i]] || 0) + sz[i];
    }
    return { L: L, n: n, t0: t0, t1: t1, sz: sz, ad: ad, own: own, kn: kn, rn: rn, st: st, ly: ly, lv: lv,
             cat: fc && fc.cat, mod: fc && fc.mod, op: fc && fc.op, ln: fc && fc.ln, split: split,
             bt: kt, bv: kv, sum: sum, ymax: ymax * 1.06 || 1, yband: ymax, yall: yall, atPeak: atPeak, peakPos: peakPos,
             fw: fw };
  }

  /* a framework layer's bands (L.fw.seg, L.fw.out) */
  function decodeCtx(C, base) {
    var n = C.sz.length, t0 = new Float64Array(n), t1 = new Float64Array(n), sz = new Float64Array(n), ad = new Float64Array(n);
    var t = base || 0, a = 0;
    for (var i = 0; i < n; i++) {
      t += C.t0[i]; a += C.ad[i];
      t0[i] = t; t1[i] = C.dur[i] < 0 ? Infinity : t + C.dur[i]; sz[i] = C.sz[i]; ad[i] = a;
    }
    return { n: n, t0: t0, t1: t1, sz: sz, ad: ad, src: C.src || null };
  }
  /* the bands of a layer live at t, in allocation order, and their bytes */
  function ctxLive(C, t) {
    var out = [], bytes = 0, hi = upper(C.t0, C.n, t);
    for (var i = 0; i < hi; i++) if (C.t1[i] > t) { out.push(i); bytes += C.sz[i]; }
    return { bands: out, bytes: bytes };
  }
  function ctxAt(C, t) { var v = ctxLive(C, t); return { n: v.bands.length, bytes: v.bytes }; }
  /* the highest reserved + outside level */
  function ctxTop(fw) {
    var ev = [];
    [fw.seg, fw.out].forEach(function (C) {
      for (var i = 0; i < C.n; i++) { ev.push([C.t0[i], C.sz[i]]); if (C.t1[i] !== Infinity) ev.push([C.t1[i], -C.sz[i]]); }
    });
    ev.sort(function (x, y) { return x[0] - y[0] || x[1] - y[1]; });
    var lvl = 0, top = 0;
    ev.forEach(function (e) { lvl += e[1]; if (lvl > top) top = lvl; });
    return top;
  }
  /* bands of a layer live at moments that only grow (the columns, left to right) */
  function tracker(C) { return { C: C, p: 0, act: [] }; }
  function trackLive(T, t) {
    var C = T.C;
    while (T.p < C.n && C.t0[T.p] <= t) T.act.push(T.p++);
    T.act = T.act.filter(function (i) { return C.t1[i] > t; });
    return T.act;
  }

  var lanes = D.lanes.map(decode);
  /* Steps on x (--diff opens so; a switch otherwise). A lane's time t in
   * step k (starting at s_k) is k + (t - s_k) / (s_(k+1) - s_k): both runs'
   * steps line up. */
  var stepOK = lanes.length > 0, stepAxis;
  lanes.forEach(function (X) {
    var st = X.L.steps.filter(function (s, i, a) { return !i || s[0] > a[i - 1][0]; });
    if (st.length < 2) stepOK = false;
    X.kt = st.map(function (s) { return s[0]; });
    X.ku = st.map(function (s, i) { return i && s[1] <= st[i - 1][1] ? st[i - 1][1] + 1 : s[1]; });
    var n = st.length;
    if (n < 2) return;
    X.kt.push(Math.max(X.L.span[1], 2 * X.kt[n - 1] - X.kt[n - 2])); X.ku.push(X.ku[n - 1] + 1);
    /* within a step, x follows the lane's activity (the summary's buckets,
     * of about equal event counts), not its clock: a burst of a millisecond
     * in a step of a second fills the step */
    var kt = [], ku = [], S = X.sum, b = upper(S.l, S.n, X.kt[0]);
    if (X.L.span[0] < X.kt[0]) { kt.push(X.L.span[0]); ku.push(X.ku[0] - 1); }
    for (var k = 0; k + 1 < X.kt.length; k++) {
      var e = b;
      while (e < S.n && S.l[e] < X.kt[k + 1]) e++;
      kt.push(X.kt[k]); ku.push(X.ku[k]);
      for (var q = b; q < e; q++)
        if (S.l[q] > kt[kt.length - 1]) { kt.push(S.l[q]); ku.push(X.ku[k] + (q - b + 1) / (e - b + 1) * (X.ku[k + 1] - X.ku[k])); }
      b = e;
    }
    kt.push(X.kt[X.kt.length - 1]); ku.push(X.ku[X.ku.length - 1]);
    X.kt = kt; X.ku = ku;
  });
  function toU(X, t) {
    if (!stepAxis) return t;
    var kt = X.kt, ku = X.ku, n = kt.length, k = Math.max(0, Math.min(n - 2, upper(kt, n, t) - 1));
    return ku[k] + (t - kt[k]) / (kt[k + 1] - kt[k]) * (ku[k + 1] - ku[k]);
  }
  function fromU(X, u) {
    if (!stepAxis) return u;
    var kt = X.kt, ku = X.ku, n = ku.length, k = Math.max(0, Math.min(n - 2, upper(ku, n, u) - 1));
    return kt[k] + (u - ku[k]) / (ku[k + 1] - ku[k]) * (kt[k + 1] - kt[k]);
  }
  /* the opening view (the active steps, tl's lane_view) and the whole span, on the axis in use */
  var home, full, view = {};
  function setAxis(steps) {
    stepAxis = steps && stepOK;
    home = { a: Infinity, b: -Infinity }; full = { a: Infinity, b: -Infinity };
    lanes.forEach(function (X) {
      home.a = Math.min(home.a, toU(X, X.L.view[0])); home.b = Math.max(home.b, toU(X, X.L.view[1]));
      full.a = Math.min(full.a, toU(X, Math.min(X.L.span[0], X.L.view[0])));
      full.b = Math.max(full.b, toU(X, Math.max(X.L.span[1], X.L.view[1])));
    });
    if (!(home.b > home.a)) { home.a = 0; home.b = stepAxis ? 1 : 1e6; }
    if (!(full.b > full.a)) full = { a: home.a, b: home.b };
    view.a = home.a; view.b = home.b;
  }
  setAxis(!!D.stepAxis);
  function fmtU(u) { return stepAxis ? 'step ' + u.toFixed(2) : fmtT(u); }
  /* y: the scale fits the bands' total in view; with the bridge's layers, a switch fits every layer */
  var yAll = false;
  /* colour by: one of the owner keys (D.keys: name, band column) */
  var keys = [], keyOf = {};
  (D.keys || [[D.by, 'own']]).forEach(function (k) { if (!keyOf[k[0]]) { keyOf[k[0]] = 1; keys.push(k); } });
  var keyIx = 0, colorMap = D.colorOf, stackOn = false;
  function setKey(ix) {
    keyIx = ix;
    lanes.forEach(function (X) { X.key = X[keys[ix][1]]; });
    /* the categories (the first key with D.stack) stack in their order */
    stackOn = !ix && !!D.stack;
    var src = document.getElementById('src');
    if (src) src.textContent = S[D.title] + ' \u00b7 bands coloured by ' + keys[ix][0];
    if (!ix) { colorMap = D.colorOf; return; }
    /* the others ranked as the analyzer ranks owners: most bytes live at a lane's peak, then most allocated */
    var sc = {};
    lanes.forEach(function (X) {
      var at = {};
      for (var i = 0; i < X.n; i++) {
        var o = X.key[i], e = sc[o] || (sc[o] = { o: o, peak: 0, total: 0 });
        e.total += X.sz[i];
        if (i < X.peakPos && X.t1[i] > X.L.peak.t) at[o] = (at[o] || 0) + X.sz[i];
      }
      Object.keys(at).forEach(function (o) { if (at[o] > sc[o].peak) sc[o].peak = at[o]; });
    });
    var r = Object.keys(sc).map(function (o) { return sc[o]; });
    r.sort(function (x, y) { return y.peak - x.peak || y.total - x.total || (S[x.o] < S[y.o] ? -1 : 1); });
    colorMap = {};
    r.slice(0, D.ncolors).forEach(function (e, i) { colorMap[e.o] = i; });
  }

  /* ---- page furniture ---- */
  document.getElementById('src').textContent = S[D.title] + ' \u00b7 bands coloured by ' + D.by;
  var notes = document.getElementById('notes');
  function note(s, cls) { var p = document.createElement('div'); p.textContent = s; if (cls) p.className = cls; notes.appendChild(p); }
  lanes.forEach(function (X) {
    var L = X.L;
    if (L.warning) note(S[L.title] + ': WARNING: ' + S[L.warning], 'warn');
    var what = S[L.title] + ': ' + L.nall + ' allocations (' + L.layers.map(function (l) { return S[l]; }).join(', ') + ')';
    if (X.fw)
      what = S[L.title] + ': ' + L.nall + ' tensors, the coloured bands (' + S[L.layers[0]] + '); ' + X.fw.seg.n +
        ' reserved segments, drawn light behind the tensors with a line at each one\'s top: where the reserve shows above ' +
        'the tensors, the allocator holds memory that no tensor uses (cached or fragmented); ' + X.fw.out.n +
        ' allocations outside PyTorch\'s allocator (CUDA allocations in none of its segments: cuBLAS workspaces, NCCL ' +
        'buffers, other libraries), hatched and stacked on top of the reserve' + (L.drv.length ? '; the dashed line is the driver\'s used memory' : '');
    if (L.merged.n)
      what += '; ' + L.n + ' drawn one by one (the ' + D.merge.keep + ' largest and every one live at the peak), ' +
        L.merged.n + ' smaller ones (each ' + fmtB(L.merged.max) + ' or less, ' + fmtB(L.merged.bytes) +
        ' in all) merged into one grey layer on top of the bands' +
        (X.split ? ' (coloured by category: split by category, each share lighter on its own category\'s bands, wherever a column\'s total is exact)' : '');
    what += '; each column shows the moment in it with the most memory live' +
      (X.sum.per > 1 ? ' where the lane\'s total is known exactly (a summary of ' + X.sum.n + ' buckets of up to ' + X.sum.per +
        ' event times; zoomed in further, a column within a bucket shows in orange the range its total lies in)' : ' (the exact total)') +
      ', the highest total within the column faint above it, and its lowest as a dark dot';
    if (L.leftOut[0]) what += '; ' + L.leftOut[0] + ' later allocations (' + fmtB(L.leftOut[1]) + ') not collected (memory bound)';
    note(what + '.');
  });
  var legend = document.getElementById('legend');
  var X0 = lanes[0], ownLegend = document.createElement('div'), legendOut = [];
  legend.appendChild(ownLegend);
  function swatch(bg, text) {
    var d = document.createElement('div'), sw = document.createElement('i');
    sw.style.background = bg;
    d.appendChild(sw); d.appendChild(document.createTextNode(text)); d.title = text;
    ownLegend.appendChild(d);
  }
  /* the owners coloured (by the key in use) and their bytes live at the first lane's peak */
  function buildLegend() {
    ownLegend.textContent = '';
    var lg = document.createElement('div');
    lg.innerHTML = '<b></b>';
    lg.firstChild.textContent = (stackOn ? 'Category, stacked in this order from the bottom' : 'Owner (' + keys[keyIx][0] + ')') + ' \u2014 bytes live at the peak' + (X0 && X0.L.peak ? ' of ' + S[X0.L.title] + ' (' + fmtB(X0.L.peak.bytes) + ' at ' + fmtT(X0.L.peak.t) + ', step ' + X0.L.peak.step + ')' : '');
    ownLegend.appendChild(lg);
    if (!X0) return;
    if (!keyIx) {
      X0.L.legend.forEach(function (e, i) {
        swatch(D.colors[i], fmtB(e[1]) + '  ' + S[e[0]]);
        if (legendOut.length < X0.L.legend.length) legendOut.push({ name: S[e[0]], bytes: e[1], page_bytes: X0.atPeak[e[0]] || 0 });
      });
    } else {
      var at = {}, byC = [];
      for (var i = 0; i < X0.peakPos; i++) if (X0.t1[i] > X0.L.peak.t) at[X0.key[i]] = (at[X0.key[i]] || 0) + X0.sz[i];
      Object.keys(colorMap).forEach(function (o) { byC[colorMap[o]] = o; });
      byC.forEach(function (o, i) { swatch(D.colors[i], fmtB(at[o] || 0) + '  ' + S[o]); });
    }
    swatch(D.colors[D.ncolors], stackOn ? 'no category (a block the categories do not know)' : 'every other owner');
    if (lanes.some(function (X) { return X.L.merged.n; }))
      swatch(MERGED_CSS, stackOn && lanes.some(function (X) { return X.split; }) ?
        'small allocations, merged: each category\'s share drawn lighter on its own bands where the total is exact; grey where a column lies within a bucket of the summary' :
        'small allocations, merged (no owner colour): the lane\'s exact total less the bands drawn');
  }
  buildLegend();
  var layersOut = lanes.map(function (X) {
    if (!X.fw) return null;
    var F = X.L.fw, pk = X.fw.segPeak || { n: 0, bytes: 0 }, po = X.fw.outPeak || { n: 0, bytes: 0 };
    return { title: S[X.L.title], segments: X.fw.seg.n, outside_n: X.fw.out.n, reserved: F.reserved, reserved_page: pk.bytes,
             reserved_model: F.seg.atPeak, segments_at_peak: pk.n, outside: F.outside, outside_page: po.bytes, outside_model: F.out.atPeak };
  });
  if (X0 && X0.fw) {
    var F0 = layersOut[0], pkb = X0.L.peak ? X0.L.peak.bytes : 0;
    var lh = document.createElement('div');
    lh.innerHTML = '<b></b>';
    lh.firstChild.textContent = 'Layers of ' + S[X0.L.title] + ' at the peak (the analyzer\'s figures)';
    legend.appendChild(lh);
    [[SEG_CSS, D.stack ? 'allocator cache: ' + fmtB(Math.max(0, F0.reserved - pkb)) + ' reserved in no tensor, of ' +
      fmtB(F0.reserved) + ' in ' + F0.segments_at_peak + ' reserved segments, light, behind the tensors' :
      fmtB(F0.reserved) + ' reserved segments (' + F0.segments_at_peak + '; ' +
      fmtB(Math.max(0, F0.reserved - pkb)) + ' in no tensor), light, behind the tensors'],
     ['repeating-linear-gradient(45deg,' + OUT_CSS[0] + ' 0 3px,' + OUT_CSS[1] + ' 3px 6px)',
      (D.stack ? 'outside the allocator: ' : '') + fmtB(F0.outside) + ' outside PyTorch\'s allocator, hatched, on the reserve']].forEach(function (e) {
      var d = document.createElement('div'), sw = document.createElement('i');
      sw.style.background = e[0];
      if (e[0] === SEG_CSS) sw.style.borderTop = '2px solid ' + SEG_EDGE_CSS;
      d.appendChild(sw); d.appendChild(document.createTextNode(e[1])); d.title = e[1];
      legend.appendChild(d);
    });
  }

  var box = document.getElementById('lanes');
  lanes.forEach(function (X) {
    var div = document.createElement('div'); div.className = 'lane';
    var h = document.createElement('h2');
    h.textContent = S[X.L.title] + (X.L.peak ? ' \u2014 peak ' + fmtB(X.L.peak.bytes) + ' at ' + fmtT(X.L.peak.t) + ' (step ' + X.L.peak.step + ')' : '');
    var cv = document.createElement('canvas');
    div.appendChild(h); div.appendChild(cv); box.appendChild(div);
    X.cv = cv;
  });
  /* --diff: B - A over the common axis, from each side's first lane */
  var diffX = D.diff && lanes.length >= 2 ? { A: lanes[0], B: lanes[lanes.length - 1] } : null;
  if (diffX) {
    lanes.forEach(function (X) { if (S[X.L.title].charAt(0) === 'B' && diffX.B === lanes[lanes.length - 1] && X !== lanes[0]) diffX.B = X; });
    var dd = document.createElement('div'); dd.className = 'lane';
    var dh = document.createElement('h2');
    dh.textContent = 'B \u2212 A: ' + S[diffX.B.L.title] + ' less ' + S[diffX.A.L.title] + ', the totals each lane draws at a column';
    diffX.cv = document.createElement('canvas'); diffX.cv.className = 'diffcv';
    dd.appendChild(dh); dd.appendChild(diffX.cv); box.appendChild(dd);
    dd.hidden = true;
    diffX.div = dd;
  }

  /* ---- controls: axis, y fit, colour by, B - A ---- */
  var bar = document.getElementById('bar');
  function control(label, fn) {
    var b = document.createElement('button'); b.type = 'button'; b.textContent = label;
    b.addEventListener('click', function () { fn(b); drawAll(); });
    bar.insertBefore(b, document.getElementById('hint'));
    return b;
  }
  if (stepOK) control(stepAxis ? 'x: steps' : 'x: time', function (b) { setAxis(!stepAxis); b.textContent = stepAxis ? 'x: steps' : 'x: time'; });
  if (lanes.some(function (X) { return X.fw; }))
    control('y: tensors', function (b) { yAll = !yAll; b.textContent = yAll ? 'y: all layers' : 'y: tensors'; });
  if (diffX) control('B \u2212 A: off', function (b) { diffX.div.hidden = !diffX.div.hidden; b.textContent = diffX.div.hidden ? 'B \u2212 A: off' : 'B \u2212 A: on'; });
  if (keys.length > 1) {
    var sel = document.createElement('select');
    keys.forEach(function (k, i) { var o = document.createElement('option'); o.value = i; o.textContent = 'colour by ' + k[0]; sel.appendChild(o); });
    sel.addEventListener('change', function () { setKey(+sel.value); drawAll(); buildLegend(); });
    bar.insertBefore(sel, document.getElementById('hint'));
  }
  setKey(0);
  buildLegend();

  /* ---- the overview strip: every lane's highest total over the whole span, the view boxed ---- */
  var strip = document.getElementById('strip');
  function drawStrip() {
    var dpr = window.devicePixelRatio || 1, w = strip.clientWidth || 1000, h = strip.clientHeight || 40;
    strip.width = Math.round(w * dpr); strip.height = Math.round(h * dpr);
    var ctx = strip.getContext('2d'), x0 = ML, x1 = w - MR, n = Math.max(1, Math.round(x1 - x0));
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.fillStyle = '#fafafa'; ctx.fillRect(0, 0, w, h);
    var save = { a: view.a, b: view.b }, hi = [], top = 0;
    view.a = full.a; view.b = full.b;
    lanes.forEach(function (X) {
      var c = columns(X, n);
      hi.push(c.ehi);
      for (var k = 0; k < n; k++) if (c.ehi[k] > top) top = c.ehi[k];
    });
    view.a = save.a; view.b = save.b;
    ctx.fillStyle = 'rgba(90,90,90,0.35)';
    hi.forEach(function (e) {
      for (var k = 0; k < n; k++) { var y = e[k] / (top || 1) * (h - 4); ctx.fillRect(x0 + k, h - y, 1, y); }
    });
    var sx = function (u) { return x0 + (u - full.a) / (full.b - full.a) * (x1 - x0); };
    var a = Math.max(x0, sx(view.a)), b = Math.min(x1, sx(view.b));
    ctx.strokeStyle = '#d62728'; ctx.lineWidth = 1.5;
    ctx.strokeRect(a, 1, Math.max(2, b - a), h - 2);
  }
  strip.addEventListener('click', function (e) {
    var r = strip.getBoundingClientRect(), f = (e.clientX - r.left - ML) / (r.width - ML - MR);
    var u = full.a + Math.max(0, Math.min(1, f)) * (full.b - full.a), span = view.b - view.a;
    view.a = u - span / 2; view.b = u + span / 2;
    drawAll();
  });

  /* ---- B - A: at each column, B's drawn total less A's ---- */
  function drawDiff() {
    if (!diffX || diffX.div.hidden) return;
    var cv = diffX.cv, dpr = window.devicePixelRatio || 1, w = cv.clientWidth || 1000, h = cv.clientHeight || 160;
    cv.width = Math.round(w * dpr); cv.height = Math.round(h * dpr);
    var ctx = cv.getContext('2d'), A = diffX.A.cols, B = diffX.B.cols, n = Math.min(A.lo.length, B.lo.length), k, m = 1;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.fillStyle = '#fff'; ctx.fillRect(0, 0, w, h);
    var d = new Float64Array(n);
    for (k = 0; k < n; k++) { d[k] = B.lo[k] - A.lo[k]; if (Math.abs(d[k]) > m) m = Math.abs(d[k]); }
    var mid = h / 2, sc = (h / 2 - 14) / m, pw = (w - ML - MR) / n;
    for (k = 0; k < n; k++) {
      ctx.fillStyle = d[k] > 0 ? '#d62728' : '#2ca02c';
      var y = d[k] * sc;
      ctx.fillRect(ML + k * pw, y > 0 ? mid - y : mid, Math.max(pw, 1), Math.abs(y));
    }
    ctx.strokeStyle = '#000'; ctx.beginPath(); ctx.moveTo(ML, mid + 0.5); ctx.lineTo(w - MR, mid + 0.5); ctx.stroke();
    ctx.fillStyle = '#333'; ctx.font = '11px sans-serif'; ctx.textAlign = 'right';
    ctx.fillText('+' + fmtB(m), ML - 5, 16); ctx.fillText('0', ML - 5, mid + 4); ctx.fillText('\u2212' + fmtB(m), ML - 5, h - 6);
    diffX.d = d;
  }

  /* ---- drawing ---- */
  function niceStep(range, n) {
    var raw = range / n, p = Math.pow(10, Math.floor(Math.log10(raw))), m = raw / p;
    return (m >= 5 ? 5 : m >= 2 ? 2 : 1) * p;
  }
  function xOf(X, t) { return ML + (toU(X, t) - view.a) / (view.b - view.a) * (X.w - ML - MR); }
  function yOf(X, b) { return X.h - MB - b / X.ymax * (X.h - MT - MB); }

  /* the bands' level at t (live: allocated at or before t, freed after) */
  function bandsAt(X, t) { var k = upper(X.bt, X.bt.length, t) - 1; return k < 0 ? 0 : X.bv[k]; }
  /* the lane's live total at t from the summary: exact (lo == hi) unless t
   * lies within a bucket of several times, then the bucket's range */
  function totalAt(X, t) {
    var S = X.sum, k = upper(S.f, S.n, t) - 1;
    if (k < 0) return { lo: 0, hi: 0, k: -1 };
    if (t >= S.l[k]) return { lo: S.e[k], hi: S.e[k], k: k };
    return { lo: S.lo[k], hi: S.hi[k], k: -1 };
  }
  /* What each pixel column shows: its moment t (the end of the summary's
   * bucket there with the most live, where its total is exact; else the
   * column's start), the last band allocated by then (j), the total drawn
   * (tot: exact when lo == hi, else the range it lies in), the lowest and
   * highest total anywhere in the column (elo, ehi), and the bucket whose
   * end level the column's exact total is (kb; -1 within a bucket). */
  function columns(X, NC) {
    var ct = new Float64Array(NC), cj = new Int32Array(NC), lo = new Float64Array(NC), hi = new Float64Array(NC), kb = new Int32Array(NC);
    var elo = new Float64Array(NC), ehi = new Float64Array(NC), span = (view.b - view.a) / NC, S = X.sum;
    for (var c = 0; c < NC; c++) {
      var ca = fromU(X, view.a + c * span), cb = fromU(X, view.a + (c + 1) * span);
      var k0 = upper(S.l, S.n, ca - 1e-9), k1 = upper(S.l, S.n, cb - 1e-9), best = -1, k;
      for (k = k0; k < k1; k++) if (best < 0 || S.e[k] > S.e[best]) best = k;
      var at = totalAt(X, ca), t;
      if (best >= 0) { t = S.l[best]; lo[c] = hi[c] = S.e[best]; kb[c] = best; } else { t = ca; lo[c] = at.lo; hi[c] = at.hi; kb[c] = at.k; }
      ct[c] = t; cj[c] = upper(X.t0, X.n, t) - 1;
      /* the column's range: the total at its start, then every bucket that begins or ends in it */
      var a = at.lo, b = at.hi, f1 = upper(S.f, S.n, cb - 1e-9);
      for (k = k0; k < f1; k++) { if (S.lo[k] < a) a = S.lo[k]; if (S.hi[k] > b) b = S.hi[k]; }
      elo[c] = a; ehi[c] = b;
    }
    return { t: ct, j: cj, lo: lo, hi: hi, elo: elo, ehi: ehi, kb: kb };
  }

  function paintBands(X, ctx, PW, PH) {
    var img = ctx.createImageData(PW, PH), px = new Uint32Array(img.data.buffer);
    var cols = X.cols, active = new Int32Array(X.n), na = 0, p = 0, scale = PH / X.ymax;
    var drawn = new Uint8Array(X.n), i, k, y, G = D.ncolors + 1, g;
    /* stacked by category: the live bands of each colour, and the merged bytes' lighter shade */
    var grp = [], gn = new Int32Array(G);
    if (stackOn) for (g = 0; g < G; g++) grp.push(new Int32Array(X.n || 1));
    var segT = X.fw ? tracker(X.fw.seg) : null, outT = X.fw ? tracker(X.fw.out) : null;
    for (var c = 0; c < PW; c++) {
      var tc = cols.t[c], j = cols.j[c];
      while (p <= j) active[na++] = p++;
      var m = 0;
      for (k = 0; k < na; k++) if (X.t1[active[k]] > tc) active[m++] = active[k];
      na = m;
      var sacc = 0, sprev = PH;
      if (segT) trackLive(segT, tc).forEach(function (si) {
        sacc += X.fw.seg.sz[si];
        var stop = Math.max(0, Math.round(PH - sacc * scale));
        if (stop < sprev) {
          for (var ys = stop + 1; ys < sprev; ys++) px[ys * PW + c] = SEGC;
          px[stop * PW + c] = SEGE;
          sprev = stop;
        }
      });
      var acc = 0, prev = PH, top;
      if (stackOn) {
        gn.fill(0);
        for (k = 0; k < na; k++) { i = active[k]; g = colorOf(X.key[i]); grp[g][gn[g]++] = i; }
        for (g = 0; g < G; g++) {
          var col = COL[g];
          for (k = 0; k < gn[g]; k++) {
            i = grp[g][k];
            acc += X.sz[i];
            top = Math.max(0, Math.round(PH - acc * scale));
            if (top < prev) { for (y = top; y < prev; y++) px[y * PW + c] = col; drawn[i] = 1; prev = top; }
          }
          var mg = mergedAt(X, cols.kb[c], g);
          if (mg > 0) {
            acc += mg;
            top = Math.max(0, Math.round(PH - acc * scale));
            for (y = top; y < prev; y++) px[y * PW + c] = COLM[g];
            if (top < prev) prev = top;
          }
        }
      } else {
        for (k = 0; k < na; k++) {
          i = active[k];
          acc += X.sz[i];
          top = Math.max(0, Math.round(PH - acc * scale));
          if (top < prev) {
            var col2 = COL[colorOf(X.key[i])];
            for (y = top; y < prev; y++) px[y * PW + c] = col2;
            drawn[i] = 1;
            prev = top;
          }
        }
      }
      /* the merged small allocations: the total less the bands drawn, solid
       * as far as the total surely reaches, light over the range it may take */
      var mlo = Math.max(acc, cols.lo[c]), mhi = Math.max(acc, cols.hi[c]);
      var mtop = Math.max(0, Math.round(PH - mlo * scale)), etop = Math.max(0, Math.round(PH - mhi * scale));
      for (y = mtop; y < prev; y++) px[y * PW + c] = MERGEDC;
      if (mtop < prev) prev = mtop;
      for (y = etop; y < prev; y++) px[y * PW + c] = RANGEC;
      if (etop < prev) prev = etop;
      acc = mlo;
      /* the highest total within the column, faint, and its lowest, a dark dot */
      var htop = Math.max(0, Math.round(PH - cols.ehi[c] * scale));
      for (y = htop; y < prev; y++) px[y * PW + c] = ENVC;
      var ly = Math.round(PH - cols.elo[c] * scale) - 1;
      if (cols.ehi[c] > cols.elo[c] && ly >= 0 && ly < PH) px[ly * PW + c] = LOWC;
      if (outT) {
        var oacc = Math.max(acc, sacc), oprev = Math.min(prev, sprev);
        trackLive(outT, tc).forEach(function (oi) {
          oacc += X.fw.out.sz[oi];
          var otop = Math.max(0, Math.round(PH - oacc * scale));
          for (y = otop; y < oprev; y++) px[y * PW + c] = OUTC[((c + y) >> 2) & 1];
          if (otop < oprev) oprev = otop;
        });
      }
    }
    X.cols = cols;
    var nd = 0;
    for (i = 0; i < X.n; i++) nd += drawn[i];
    X.visible = nd;
    return img;
  }

  /* a lane's canvas sized, and its columns worked out for the view */
  function prepLane(X) {
    var dpr = window.devicePixelRatio || 1, cv = X.cv;
    var w = cv.clientWidth || 1000, h = cv.clientHeight || LANE_H;
    cv.width = Math.round(w * dpr); cv.height = Math.round(h * dpr);
    X.w = w; X.h = h; X.dpr = dpr;
    X.PW = Math.max(1, Math.round((w - ML - MR) * dpr));
    X.cols = columns(X, X.PW);
    var top = 0;
    for (var c = 0; c < X.PW; c++) if (X.cols.ehi[c] > top) top = X.cols.ehi[c];
    return yAll && X.fw ? Math.max(top, X.yall) : top;
  }

  function drawLane(X) {
    var dpr = X.dpr, cv = X.cv, w = X.w, h = X.h;
    var ctx = cv.getContext('2d');
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.fillStyle = '#fff'; ctx.fillRect(0, 0, w, h);
    ctx.font = '11px sans-serif';
    var L = X.L, x0 = ML, x1 = w - MR, yb = h - MB;
    /* windows */
    ctx.fillStyle = '#eef4fa';
    L.wins.forEach(function (wn) {
      var a = Math.max(x0, xOf(X, wn[0])), b = Math.min(x1, xOf(X, wn[1]));
      if (b > a) ctx.fillRect(a, MT, b - a, yb - MT);
    });
    /* y grid */
    ctx.strokeStyle = '#e4e4e4'; ctx.fillStyle = '#333'; ctx.textAlign = 'right';
    var ui = 0, unit = 1, UN = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    while (ui < 4 && X.ymax / unit >= 1024 * 1.5) { unit *= 1024; ui++; }
    var ys = niceStep(X.ymax / unit, 5) * unit;
    for (var gi = 0, v = 0; gi <= 64 && v <= X.ymax; gi++, v = gi * ys) {
      var yy = Math.round(yOf(X, v)) + 0.5;
      ctx.beginPath(); ctx.moveTo(x0, yy); ctx.lineTo(x1, yy); ctx.stroke();
      ctx.fillText(+(v / unit).toPrecision(6) + ' ' + UN[ui], x0 - 5, yy + 4);
    }
    /* the bands, at device pixels */
    var PW = X.PW, PH = Math.max(1, Math.round((yb - MT) * dpr));
    var off = document.createElement('canvas'); off.width = PW; off.height = PH;
    var octx = off.getContext('2d');
    octx.putImageData(paintBands(X, octx, PW, PH), 0, 0);
    ctx.drawImage(off, x0, MT, x1 - x0, yb - MT);
    /* driver's used memory */
    if (L.drv.length) {
      ctx.save(); ctx.beginPath(); ctx.rect(x0, MT - 2, x1 - x0, yb - MT + 2); ctx.clip();
      ctx.strokeStyle = '#333'; ctx.setLineDash([5, 3]); ctx.lineWidth = 1.2; ctx.beginPath();
      var offs = [];
      L.drv.forEach(function (q, i) {
        var xx = xOf(X, q[0]), yy2 = Math.max(MT - 1, yOf(X, q[1]));
        if (q[1] > X.ymax && xx >= x0 && xx <= x1) offs.push(xx);
        if (i) ctx.lineTo(xx, yy2); else ctx.moveTo(xx, yy2);
        var nx = i + 1 < L.drv.length ? xOf(X, L.drv[i + 1][0]) : x1;
        ctx.lineTo(nx, yy2);
      });
      ctx.stroke(); ctx.restore();
      /* where the driver's line is above the scale: marks on the top edge */
      ctx.fillStyle = '#333';
      var lastOff = -1e9;
      offs.forEach(function (xx) {
        if (xx - lastOff < 8) return;
        ctx.beginPath(); ctx.moveTo(xx, MT - 9); ctx.lineTo(xx - 4, MT - 3); ctx.lineTo(xx + 4, MT - 3); ctx.fill();
        lastOff = xx;
      });
      var over = 0;
      L.drv.forEach(function (q) { var u = toU(X, q[0]); if (u >= view.a && u <= view.b && q[1] > X.ymax) over = Math.max(over, q[1]); });
      var dl = 'dashed: driver used' + (over ? ' (up to ' + fmtB(over) + ' in view, above the scale)' : '');
      ctx.textAlign = 'right'; ctx.fillStyle = 'rgba(255,255,255,0.85)';
      ctx.fillRect(x1 - ctx.measureText(dl).width - 8, MT + 2, ctx.measureText(dl).width + 6, 15);
      ctx.fillStyle = '#333'; ctx.fillText(dl, x1 - 5, MT + 13);
    }
    /* steps */
    ctx.strokeStyle = '#999'; ctx.setLineDash([2, 3]); ctx.fillStyle = '#555'; ctx.textAlign = 'center';
    var lastLabel = -1e9;
    L.steps.forEach(function (s) {
      var xs = xOf(X, s[0]);
      if (xs < x0 || xs > x1) return;
      ctx.beginPath(); ctx.moveTo(xs + 0.5, MT); ctx.lineTo(xs + 0.5, yb); ctx.stroke();
      if (xs - lastLabel > 52) { ctx.fillText('step ' + s[1], xs, MT - 6); lastLabel = xs; }
    });
    ctx.setLineDash([]);
    /* tags */
    ctx.fillStyle = '#444'; lastLabel = -1e9;
    L.tags.forEach(function (g) {
      var xt = xOf(X, g[0]);
      if (xt < x0 || xt > x1) return;
      ctx.beginPath(); ctx.moveTo(xt, yb + 22); ctx.lineTo(xt - 4, yb + 30); ctx.lineTo(xt + 4, yb + 30); ctx.fill();
      if (xt - lastLabel > 70) { ctx.textAlign = 'left'; ctx.fillText(S[g[1]].substr(0, 24), xt + 5, yb + 30); lastLabel = xt; }
    });
    /* peak */
    if (L.peak) {
      var px = xOf(X, L.peak.t), py = yOf(X, L.peak.bytes);
      if (px >= x0 && px <= x1) {
        ctx.strokeStyle = '#000'; ctx.lineWidth = 2; ctx.beginPath(); ctx.arc(px, py, 4, 0, 7); ctx.stroke(); ctx.lineWidth = 1;
        ctx.fillStyle = '#000'; ctx.textAlign = px > w * 0.7 ? 'right' : 'left';
        ctx.fillText('peak ' + fmtB(L.peak.bytes), px + (px > w * 0.7 ? -8 : 8), Math.max(MT + 10, py - 6));
      }
    }
    /* time axis */
    ctx.strokeStyle = '#000'; ctx.beginPath(); ctx.moveTo(x0, yb + 0.5); ctx.lineTo(x1, yb + 0.5); ctx.stroke();
    ctx.fillStyle = '#333'; ctx.textAlign = 'center';
    var sc = stepAxis ? 1 : 1e6, span = (view.b - view.a) / sc, xsStep = niceStep(span, 8);
    var first = Math.ceil(view.a / sc / xsStep) * xsStep;
    for (var k = 0; k < 40; k++) {
      var ms = first + k * xsStep, xx3 = ML + (ms * sc - view.a) / (view.b - view.a) * (X.w - ML - MR);
      if (xx3 > x1) break;
      ctx.beginPath(); ctx.moveTo(xx3, yb); ctx.lineTo(xx3, yb + 5); ctx.stroke();
      ctx.fillText(stepAxis ? 'step ' + +ms.toPrecision(10) : +ms.toPrecision(10) + ' ms', xx3, yb + 16);
    }
  }

  var firstPaint = null;
  function drawAll() {
    var ytop = 0;
    lanes.forEach(function (X) { ytop = Math.max(ytop, prepLane(X)); });
    /* lanes are compared: one y scale */
    lanes.forEach(function (X) { X.ymax = ytop * 1.06 || 1; });
    lanes.forEach(drawLane);
    drawStrip();
    drawDiff();
    document.getElementById('viewinfo').textContent = 'view ' + fmtU(view.a) + ' \u2013 ' + fmtU(view.b) +
      (stepAxis ? ' (each lane\'s steps stretched to one unit)' : '');
    if (firstPaint === null) firstPaint = performance.now();
  }

  /* ---- what is live at a column ---- */
  /* the merged bytes of colour g at the end of bucket k (0: unknown or none) */
  function mergedAt(X, k, g) { return stackOn && X.split && k >= 0 && X.split[g] ? X.split[g][k] : 0; }
  /* the bands live at the column's moment, in the order they stack */
  function liveAt(X, c) {
    var tc = X.cols.t[c], j = X.cols.j[c], out = [];
    for (var i = 0; i <= j; i++) if (X.t1[i] > tc) out.push(i);
    if (stackOn) out.sort(function (a, b) { return colorOf(X.key[a]) - colorOf(X.key[b]) || a - b; });
    return { t: tc, bands: out };
  }
  /* the column's stack bottom up: bands ({i}) and, stacked by category,
   * each category's merged bytes after its bands ({g, bytes}) */
  function columnStack(X, c) {
    var lv = liveAt(X, c), out = [], G = D.ncolors + 1, p = 0;
    for (var g = 0; g < G; g++) {
      while (p < lv.bands.length && (!stackOn || colorOf(X.key[lv.bands[p]]) === g)) { out.push({ i: lv.bands[p], bytes: X.sz[lv.bands[p]] }); p++; }
      var m = mergedAt(X, X.cols.kb[c], g);
      if (m > 0) out.push({ g: g, bytes: m });
      if (!stackOn) break;
    }
    return { t: lv.t, bands: lv.bands, parts: out };
  }
  function keyName(X, g) {
    var o = null;
    Object.keys(colorMap).forEach(function (k) { if (colorMap[k] === g) o = +k; });
    return o === null ? 'every other ' + keys[keyIx][0] : S[o];
  }
  function colOf(X, clientX) {
    var r = X.cv.getBoundingClientRect(), x = clientX - r.left;
    if (x < ML || x > X.w - MR || !X.cols) return -1;
    var c = Math.floor((x - ML) / (X.w - ML - MR) * X.cols.t.length);
    return Math.max(0, Math.min(X.cols.t.length - 1, c));
  }
  function bandText(X, i) {
    /* with the bridge's columns, the owner's line only when no line below names it */
    var fr = X.t1[i] === Infinity, named = X.mod ? { kernel: 1, range: 1 } : {};
    if (X.cat) named.category = 1;
    return 'size ' + fmtB(X.sz[i]) + ' at ' + hex(X.ad[i]) + '\n' +
      (named[D.by] ? '' : 'owner (' + D.by + '): ' + S[X.own[i]] + '\n') +
      (X.cat ? 'category: ' + S[X.cat[i]] + '\n' : '') +
      (X.mod ? 'module: ' + S[X.mod[i]] + '\n' + 'op: ' + S[X.op[i]] + '\n' +
       'line: ' + (X.ln[i] ? S[X.ln[i]] : '(not recorded)') + '\n' : '') +
      'kernel: ' + S[X.kn[i]] + '\n' + 'range: ' + S[X.rn[i]] + '\n' +
      'step ' + X.st[i] + ' \u00b7 layer: ' + S[X.L.layers[X.ly[i]] || 0] + '\n' +
      'allocated ' + fmtT(X.t0[i]) + ', ' + (fr ? 'never freed' : 'freed ' + fmtT(X.t1[i]) + ', lifetime ' + fmtD(X.t1[i] - X.t0[i]));
  }
  function segText(X, i, t, tensors) {
    var C = X.fw.seg, v = ctxLive(C, t), fr = C.t1[i] === Infinity;
    return 'reserved segment: size ' + fmtB(C.sz[i]) + ' at ' + hex(C.ad[i]) + '\n' +
      'layer: ' + S[X.L.layers[1]] + '\n' +
      'allocated ' + fmtT(C.t0[i]) + ', ' + (fr ? 'never freed' : 'freed ' + fmtT(C.t1[i]) + ', lifetime ' + fmtD(C.t1[i] - C.t0[i])) + '\n' +
      'at ' + fmtT(t) + ': ' + fmtB(v.bytes) + ' reserved in ' + v.bands.length + ' segments, ' + fmtB(tensors) +
      ' in tensors, ' + fmtB(Math.max(0, v.bytes - tensors)) + ' in no tensor';
  }
  function outText(X, i) {
    var C = X.fw.out, fr = C.t1[i] === Infinity;
    return 'outside PyTorch\'s allocator: size ' + fmtB(C.sz[i]) + ' at ' + hex(C.ad[i]) + '\n' +
      'layer: ' + S[X.L.layers[2]] + '\n' + 'allocated with ' + S[C.src ? C.src[i] : 0] + ' at ' + fmtT(C.t0[i]) + ', ' +
      (fr ? 'never freed' : 'freed ' + fmtT(C.t1[i]) + ', lifetime ' + fmtD(C.t1[i] - C.t0[i]));
  }
  /* what a column stacks: its moment, the tensor bands live then (drawn
   * order), their bytes with the merged layers, and the framework layers */
  function stackAt(X, c) {
    var lv = liveAt(X, c), tens = 0;
    lv.bands.forEach(function (i) { tens += X.sz[i]; });
    tens = Math.max(tens, X.cols.lo[c]);
    var st = { t: lv.t, bands: lv.bands, tensors: tens };
    if (X.fw) {
      st.seg = ctxLive(X.fw.seg, lv.t); st.out = ctxLive(X.fw.out, lv.t);
      st.outBase = Math.max(tens, st.seg.bytes);
    }
    return st;
  }
  /* the framework layer's band at a height above the tensors, or null */
  function fwHit(X, st, bytes) {
    if (!X.fw || bytes < st.tensors) return null;
    var acc = 0, k, i;
    for (k = 0; k < st.seg.bands.length; k++) {
      i = st.seg.bands[k];
      if (bytes < acc + X.fw.seg.sz[i]) return segText(X, i, st.t, st.tensors);
      acc += X.fw.seg.sz[i];
    }
    acc = st.outBase;
    for (k = 0; k < st.out.bands.length; k++) {
      i = st.out.bands[k];
      if (bytes >= acc && bytes < acc + X.fw.out.sz[i]) return outText(X, i);
      acc += X.fw.out.sz[i];
    }
    return null;
  }
  function hitText(X, clientX, clientY) {
    var c = colOf(X, clientX);
    if (c < 0) return null;
    var r = X.cv.getBoundingClientRect(), y = clientY - r.top;
    var bytes = (X.h - MB - y) / (X.h - MT - MB) * X.ymax;
    if (bytes < 0) return null;
    var fh = X.fw ? fwHit(X, stackAt(X, c), bytes) : null;
    if (fh) return fh;
    var lv = columnStack(X, c), acc = 0;
    for (var k = 0; k < lv.parts.length; k++) {
      var q = lv.parts[k];
      if (bytes < acc + q.bytes)
        return q.i !== undefined ? bandText(X, q.i) :
          'small allocations, merged: ' + fmtB(q.bytes) + ' of ' + keyName(X, q.g) + ' live at ' + fmtT(lv.t) + ' (exact)';
      acc += q.bytes;
    }
    var clo = X.cols.lo[c], chi = X.cols.hi[c];
    if (bytes < Math.max(acc, clo))
      return 'small allocations, merged: ' + fmtB(Math.max(0, clo - acc)) + ' live at ' + fmtT(lv.t) +
        '\nthe lane\'s total then: ' + fmtB(clo) + (clo === chi ? ' (exact)' : ' or more');
    if (bytes < chi)
      return 'within a bucket of the summary: the total at ' + fmtT(lv.t) + ' lies between ' + fmtB(clo) + ' and ' + fmtB(chi);
    acc = Math.max(acc, clo);
    if (X.fw) {
      var sa = stackAt(X, c);
      return 'at ' + fmtT(lv.t) + ': ' + fmtB(acc) + ' in tensors, ' + fmtB(sa.seg.bytes) + ' reserved, ' + fmtB(sa.out.bytes) +
        ' outside PyTorch\'s allocator';
    }
    return 'at ' + fmtT(lv.t) + ': ' + fmtB(acc) + ' live in the bands drawn';
  }

  var tip = document.getElementById('tip');
  function showTip(text, cx, cy) {
    if (!text) { tip.style.display = 'none'; return; }
    tip.textContent = text;
    tip.style.left = (cx + 14) + 'px'; tip.style.top = (cy + 14) + 'px'; tip.style.display = 'block';
  }
  function listLive(X, clientX) {
    var c = colOf(X, clientX);
    if (c < 0) return;
    var lv = liveAt(X, c), box2 = document.getElementById('live');
    lv.bands.sort(function (a, b) { return X.sz[b] - X.sz[a] || a - b; });
    var total = 0;
    lv.bands.forEach(function (i) { total += X.sz[i]; });
    var h = document.createElement('div');
    h.textContent = S[X.L.title] + ': live at ' + fmtT(lv.t) + ' \u2014 ' + lv.bands.length + ' bands, ' + fmtB(total) + ' (largest first)';
    var tb = document.createElement('table');
    tb.innerHTML = '<tr><th>size</th><th>owner</th><th>address</th><th>allocated</th><th>lifetime</th></tr>';
    lv.bands.slice(0, 40).forEach(function (i) {
      var tr = document.createElement('tr');
      [fmtB(X.sz[i]), S[X.own[i]], hex(X.ad[i]), fmtT(X.t0[i]), X.t1[i] === Infinity ? 'never freed' : fmtD(X.t1[i] - X.t0[i])]
        .forEach(function (s, k) { var td = document.createElement('td'); td.textContent = s; if (!k) td.className = 'n'; tr.appendChild(td); });
      tb.appendChild(tr);
    });
    box2.textContent = '';
    box2.appendChild(h);
    if (X.fw) {
      var sa = stackAt(X, c), fl = document.createElement('div');
      fl.textContent = 'and ' + fmtB(sa.seg.bytes) + ' reserved in ' + sa.seg.bands.length + ' segments (' +
        fmtB(Math.max(0, sa.seg.bytes - total)) + ' in no tensor), ' + fmtB(sa.out.bytes) + ' in ' + sa.out.bands.length +
        ' allocations outside PyTorch\'s allocator';
      box2.appendChild(fl);
    }
    box2.appendChild(tb);
    if (lv.bands.length > 40) { var more = document.createElement('div'); more.textContent = '\u2026 and ' + (lv.bands.length - 40) + ' more'; box2.appendChild(more); }
  }

  /* ---- interaction ---- */
  function zoomAt(X, clientX, factor) {
    var r = X.cv.getBoundingClientRect(), f = (clientX - r.left - ML) / (X.w - ML - MR);
    f = Math.max(0, Math.min(1, f));
    var t = view.a + f * (view.b - view.a), span = (view.b - view.a) * factor;
    if (span < (stepAxis ? 1e-4 : 1000)) span = stepAxis ? 1e-4 : 1000;
    view.a = t - f * span; view.b = view.a + span;
    drawAll();
  }
  var drag = null;
  lanes.forEach(function (X) {
    var cv = X.cv;
    cv.addEventListener('wheel', function (e) {
      e.preventDefault();
      zoomAt(X, e.clientX, Math.pow(1.0015, e.deltaY));
    }, { passive: false });
    cv.addEventListener('mousedown', function (e) { drag = { x: e.clientX, a: view.a, b: view.b, moved: false, X: X }; });
    cv.addEventListener('mousemove', function (e) {
      if (drag && drag.X === X && (e.buttons & 1)) {
        var dx = e.clientX - drag.x;
        if (Math.abs(dx) > 2) drag.moved = true;
        var dt = dx / (X.w - ML - MR) * (drag.b - drag.a);
        view.a = drag.a - dt; view.b = drag.b - dt;
        drawAll();
        return;
      }
      showTip(hitText(X, e.clientX, e.clientY), e.clientX, e.clientY);
    });
    cv.addEventListener('mouseleave', function () { showTip(null); });
    cv.addEventListener('click', function (e) { if (!(drag && drag.moved)) listLive(X, e.clientX); drag = null; });
  });
  window.addEventListener('mouseup', function () { setTimeout(function () { drag = null; }, 0); });
  document.getElementById('reset').addEventListener('click', function () { view.a = home.a; view.b = home.b; drawAll(); });
  window.addEventListener('resize', drawAll);

  drawAll();

  /* ---- test hook: the numbers the page computed, and a driven zoom and hover ---- */
  var hook = {
    errors: errors,
    first_paint_ms: firstPaint,
    lanes: lanes.map(function (X) {
      var sum = 0;
      Object.keys(X.atPeak).forEach(function (o) { sum += X.atPeak[o]; });
      return { title: S[X.L.title], bands: X.n, all: X.L.nall, merged: X.L.merged.n, visible: X.visible,
               peak: X.L.peak ? X.L.peak.bytes : null, peak_t: X.L.peak ? X.L.peak.t : null, peak_sum: sum };
    }),
    legend: legendOut,
    layers: layersOut,
    view: function () { return [view.a, view.b]; },
    /* read-only views of the page's model for the tests: the axis in use, the
     * whole span, and a view set and drawn */
    axis: function () { return { steps: stepAxis, full: [full.a, full.b], home: [home.a, home.b] }; },
    setView: function (a, b) { view.a = a; view.b = b; drawAll(); return [view.a, view.b]; },
    /* lane k's columns as drawn: each one's moment (ns on the lane's time),
     * the total drawn there (lo == hi: exact; else the range it lies in)
     * and the bands' own level */
    columns: function (k) {
      var X = lanes[k], C = X.cols, out = { t: [], lo: [], hi: [], bands: [] };
      for (var c = 0; c < C.t.length; c++) {
        out.t.push(C.t[c]); out.lo.push(C.lo[c]); out.hi.push(C.hi[c]); out.bands.push(bandsAt(X, C.t[c]));
      }
      return out;
    },
    /* per lane, each owner of the bands drawn one by one and its colour (the key in use) */
    owners: function () {
      return lanes.map(function (X) {
        var seen = {}, out = [];
        for (var i = 0; i < X.n; i++) if (!seen[X.key[i]]) { seen[X.key[i]] = 1; out.push([S[X.key[i]], colorOf(X.key[i])]); }
        return { title: S[X.L.title], owners: out };
      });
    },
    keys: function () { return keys.map(function (k) { return k[0]; }); },
    key: function () { return { name: keys[keyIx][0], stacked: stackOn, by: D.by }; },
    /* lane k's column at time t (the view set around it): its moment and,
     * bottom up, each part of its stack: [owner name (the key in use), bytes, merged] */
    stackAt: function (k, t, col) {
      var X = lanes[k], c = col === undefined ? 0 : col, best = Infinity;
      for (var q = 0; col === undefined && q < X.cols.t.length; q++)
        if (Math.abs(X.cols.t[q] - t) < best) { best = Math.abs(X.cols.t[q] - t); c = q; }
      var st = columnStack(X, c);
      return { t: st.t, exact: X.cols.lo[c] === X.cols.hi[c], total: X.cols.lo[c],
               parts: st.parts.map(function (p) { return p.i !== undefined ? [S[X.key[p.i]], p.bytes, 0] : [keyName(X, p.g), p.bytes, 1]; }) };
    },
    setKey: function (i) { setKey(i); drawAll(); buildLegend(); return keys[i][0]; },
    diff: function () {
      if (!diffX) return null;
      diffX.div.hidden = false; drawAll();
      return { files: D.diff, title: S[D.title], lanes: lanes.map(function (X) { return S[X.L.title]; }),
               d: Array.prototype.slice.call(diffX.d || []), heading: diffX.div.firstChild.textContent };
    },
    selftest: function () {
      var X = lanes[0], out = { zoomed: false, tip: '' };
      if (!X || !X.L.peak) return out;
      var r = X.cv.getBoundingClientRect(), before = view.b - view.a;
      var cx = r.left + xOf(X, X.L.peak.t);
      X.cv.dispatchEvent(new WheelEvent('wheel', { deltaY: -400, clientX: cx, clientY: r.top + X.h / 2, bubbles: true, cancelable: true }));
      out.zoomed = view.b - view.a < before;
      out.view = [view.a, view.b];
      /* hover the middle of the largest band live at the peak */
      var cx2 = r.left + xOf(X, X.L.peak.t), c = colOf(X, cx2), lv = columnStack(X, c), acc = 0, best = -1, mid = 0;
      lv.parts.forEach(function (q) { var i = q.i; if (i !== undefined && (best < 0 || X.sz[i] > X.sz[best])) { best = i; mid = acc + X.sz[i] / 2; } acc += q.bytes; });
      if (best >= 0) {
        X.cv.dispatchEvent(new MouseEvent('mousemove', { clientX: cx2, clientY: r.top + yOf(X, mid), bubbles: true }));
        out.tip = tip.textContent;
        out.expect = bandText(X, best);
      }
      /* with the layers: hover the reserve's middle above the tensors, and the first band outside the allocator */
      if (X.fw) {
        var st = stackAt(X, c), hover = function (bytes) {
          X.cv.dispatchEvent(new MouseEvent('mousemove', { clientX: cx2, clientY: r.top + yOf(X, bytes), bubbles: true }));
          return tip.textContent;
        };
        if (st.seg.bytes > st.tensors) {
          var ym = (st.tensors + st.seg.bytes) / 2;
          out.seg_tip = hover(ym);
          out.seg_expect = fwHit(X, st, ym);
        }
        if (st.out.bands.length) {
          var yo = st.outBase + X.fw.out.sz[st.out.bands[0]] / 2;
          out.out_tip = hover(yo);
          out.out_expect = fwHit(X, st, yo);
        }
      }
      return out;
    }
  };
  window.__gmem = hook;
  if (location.hash.indexOf('selftest') >= 0) {
    var res = { errors: errors, first_paint_ms: firstPaint, lanes: hook.lanes, legend: legendOut, layers: layersOut };
    try { res.selftest = hook.selftest(); } catch (e) { errors.push(String(e)); }
    var pre = document.getElementById('gmem-test');
    pre.textContent = JSON.stringify(res);
  }
})();
