/// The static assets, compiled into the binary: no CDN, no build step.
enum Assets {
    /// `favicon.svg`: a small graph.
    static let favicon = #"""
        <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" fill="#1f6feb"/><path d="M9 9L16 22M23 9L16 22" stroke="#fff" stroke-width="2.5"/><circle cx="9" cy="9" r="4" fill="#fff"/><circle cx="23" cy="9" r="4" fill="#fff"/><circle cx="16" cy="23" r="4" fill="#3fb950"/></svg>
        """#

    /// `app.css`: the pages' only style sheet (the CSP allows no inline style), light and dark
    /// by `prefers-color-scheme`, from 375 px wide up.
    static let css = #"""
        :root{--bg:#ffffff;--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--panel:#f6f8fa;--link:#0969da;
        --succeeded:#1a7f37;--failed:#cf222e;--running:#0969da;--waiting:#9a6700;--pending:#6e7781;
        --skipped:#8c959f;--blocked:#8250df;--cancelled:#57606a;--notice:#fff8c5;--notice-line:#d4a72c;--timeout:#bc4c00;--scroll-shadow:rgba(31,35,40,.35);
        --code-bg:#f6f8fa;--on-state:#ffffff;color-scheme:light dark}
        @media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--muted:#9198a1;--line:#3d444d;
        --panel:#151b23;--link:#4493f8;--succeeded:#3fb950;--failed:#f85149;--running:#4493f8;
        --waiting:#d29922;--pending:#8b949e;--skipped:#6e7681;--blocked:#ab7df8;--cancelled:#9198a1;
        --notice:#2e2a1a;--notice-line:#9e6a03;--timeout:#f0883e;--scroll-shadow:rgba(230,237,243,.35);--code-bg:#010409;--on-state:#0d1117}}
        *{box-sizing:border-box}
        html{-webkit-text-size-adjust:100%}
        body{margin:0;background:var(--bg);color:var(--fg);font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
        a{color:var(--link);text-decoration:none}a:hover{text-decoration:underline}
        header.top{display:flex;flex-wrap:wrap;align-items:center;gap:4px 18px;padding:10px 16px;border-bottom:1px solid var(--line);background:var(--panel)}
        header.top .brand{font-weight:700}
        header.top nav{display:flex;gap:14px}
        main{max-width:1400px;margin:0 auto;padding:12px 16px 48px}
        h1{font-size:1.5rem;margin:.4em 0;overflow-wrap:anywhere}
        h2{font-size:1.15rem;margin:1.4em 0 .5em;border-bottom:1px solid var(--line);padding-bottom:4px}
        h3{font-size:1rem;margin:0;overflow-wrap:anywhere;font-family:ui-monospace,SFMono-Regular,Menlo,monospace}
        .muted{color:var(--muted)}
        .meta{color:var(--muted);margin:.3em 0;overflow-wrap:anywhere}
        .empty{color:var(--muted);font-style:italic}
        .notice{display:block;background:var(--notice);border:1px solid var(--notice-line);border-radius:6px;padding:6px 10px;margin:8px 0;overflow-wrap:anywhere}
        .notice.error{background:color-mix(in srgb,var(--failed) 12%,var(--panel));border-color:var(--failed)}
        form.login{display:flex;flex-wrap:wrap;gap:8px;align-items:center}form.login input{padding:5px 8px;border:1px solid var(--line);border-radius:6px;background:var(--panel);color:var(--fg);min-width:14em}
        .id{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-weight:600}
        .scroll{overflow-x:auto;max-width:100%}
        /* What does not fit scrolls, and says so: a shadow at the edge that has more (the covers
           move with the content, the shadows stay with the box). */
        .scroll{background:linear-gradient(to right,var(--bg) 30%,transparent) left/28px 100% no-repeat local,linear-gradient(to left,var(--bg) 30%,transparent) right/28px 100% no-repeat local,radial-gradient(farthest-side at 0 50%,var(--scroll-shadow),transparent) left/12px 100% no-repeat scroll,radial-gradient(farthest-side at 100% 50%,var(--scroll-shadow),transparent) right/12px 100% no-repeat scroll}
        table{border-collapse:collapse;width:100%;font-size:.93rem}
        th,td{text-align:left;padding:5px 8px;border-bottom:1px solid var(--line);vertical-align:top}
        td{white-space:nowrap}
        td.wrap{white-space:normal;overflow-wrap:anywhere;min-width:12em}
        th{color:var(--muted);font-weight:600;white-space:nowrap}
        .badge{display:inline-block;padding:0 8px;border-radius:10px;font-size:.8rem;font-weight:600;line-height:1.6;color:var(--on-state);background:var(--pending);white-space:nowrap}
        .badge.s-succeeded{background:var(--succeeded)}.badge.s-failed,.badge.s-timeout{background:var(--failed)}
        .badge.s-running{background:var(--running)}.badge.s-waiting,.badge.s-tempfail,.badge.s-stopped{background:var(--waiting)}
        .badge.s-skipped,.badge.s-missed{background:var(--skipped)}.badge.s-blocked{background:var(--blocked)}
        .badge.s-cancelled,.badge.s-interrupted{background:var(--cancelled)}
        ul.counts{display:flex;flex-wrap:wrap;gap:8px;list-style:none;padding:0;margin:8px 0}
        .count{border:1px solid var(--line);border-left:4px solid var(--pending);border-radius:6px;padding:2px 10px;background:var(--panel)}
        .count .n{font-weight:700;font-variant-numeric:tabular-nums}
        .count.zero{opacity:.55}
        .count.s-succeeded{border-left-color:var(--succeeded)}.count.s-failed{border-left-color:var(--failed)}
        .count.s-running{border-left-color:var(--running)}.count.s-waiting{border-left-color:var(--waiting)}
        .count.s-skipped{border-left-color:var(--skipped)}.count.s-blocked{border-left-color:var(--blocked)}
        .count.s-cancelled{border-left-color:var(--cancelled)}
        ul.plain{list-style:none;padding:0;margin:0}ul.plain li{padding:3px 0;overflow-wrap:anywhere}
        form.action{display:inline;margin:0 4px 0 0}
        button,.button{font:inherit;font-size:.85rem;padding:2px 10px;border-radius:6px;border:1px solid var(--line);background:var(--panel);color:var(--fg);cursor:pointer;display:inline-block}
        button:hover,.button:hover{border-color:var(--link);text-decoration:none}
        button.danger{color:var(--failed)}
        td.actions{white-space:nowrap}
        .filters{display:flex;flex-wrap:wrap;gap:6px;align-items:center;margin:6px 0}
        .chip{border:1px solid var(--line);border-radius:12px;padding:0 10px;font-size:.85rem;overflow-wrap:anywhere}
        .chip.on{background:var(--link);color:var(--bg);border-color:var(--link)}
        .pager{display:flex;gap:16px;justify-content:center;margin:14px 0}
        article.job{border:1px solid var(--line);border-radius:8px;padding:8px 12px;margin:10px 0;background:var(--bg)}
        article.job:target{outline:2px solid var(--link)}
        article.job header{display:flex;flex-wrap:wrap;align-items:center;gap:6px 8px}
        article.job header .actions{margin-left:auto}
        .detail{margin:.3em 0;overflow-wrap:anywhere}
        dl.outputs,dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;margin:6px 0}
        dl.outputs dt{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;color:var(--muted)}
        dl.outputs dd,dl.facts dd{margin:0;overflow-wrap:anywhere;font-family:ui-monospace,SFMono-Regular,Menlo,monospace;white-space:pre-wrap}
        dl.facts dd{font-family:inherit}dl.facts dt{color:var(--muted)}
        .crumbs{margin:4px 0;color:var(--muted);overflow-wrap:anywhere}
        pre.log{background:var(--code-bg);border:1px solid var(--line);border-radius:6px;padding:10px;margin:8px 0;overflow:auto;max-height:75vh;font:13px/1.45 ui-monospace,SFMono-Regular,Menlo,monospace;white-space:pre-wrap;overflow-wrap:anywhere}
        .log-head{display:flex;flex-wrap:wrap;gap:8px;align-items:center}
        .log-head .notice{margin:0}
        svg text{font:12px ui-monospace,SFMono-Regular,Menlo,monospace;fill:var(--fg)}
        svg.graph .edges path{fill:none;stroke:var(--muted);stroke-width:1.3}
        svg .arrowhead{fill:var(--muted)}
        svg.graph .node rect{fill:var(--panel);stroke:var(--pending);stroke-width:2}
        svg.graph .node text{text-anchor:middle}
        svg.graph a:hover rect{stroke-width:3}
        svg.graph .node.s-succeeded rect{stroke:var(--succeeded)}
        svg.graph .node.s-failed rect{stroke:var(--failed);fill:color-mix(in srgb,var(--failed) 14%,var(--panel))}
        svg.graph .node.s-running rect{stroke:var(--running);fill:color-mix(in srgb,var(--running) 14%,var(--panel))}
        svg.graph .node.s-waiting rect{stroke:var(--waiting)}
        svg.graph .node.s-skipped rect{stroke:var(--skipped);stroke-dasharray:4 3}
        svg.graph .node.s-blocked rect{stroke:var(--blocked);fill:color-mix(in srgb,var(--blocked) 10%,var(--panel))}
        svg.graph .node.s-cancelled rect{stroke:var(--cancelled);stroke-dasharray:2 2}
        svg.timeline .axis line{stroke:var(--line)}
        svg.timeline .axis text{fill:var(--muted);font-size:11px}
        svg.timeline .bar rect{fill:var(--pending)}
        svg.timeline .bar.s-succeeded rect{fill:var(--succeeded)}
        svg.timeline .bar.s-failed rect{fill:var(--failed)}svg.timeline .bar.s-timeout rect{fill:var(--timeout)}
        svg.timeline .bar.s-running rect{fill:var(--running)}svg.timeline .bar.s-tempfail rect{fill:var(--waiting)}
        svg.timeline .bar.s-skipped rect{fill:var(--skipped)}svg.timeline .bar.s-interrupted rect{fill:var(--cancelled)}
        ul.legend{display:flex;flex-wrap:wrap;gap:4px 14px;list-style:none;padding:0;margin:4px 0;font-size:.85rem;color:var(--muted)}
        .swatch{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:4px;background:var(--pending)}
        .swatch.s-succeeded{background:var(--succeeded)}.swatch.s-failed{background:var(--failed)}.swatch.s-running{background:var(--running)}
        .swatch.s-waiting{background:var(--waiting)}.swatch.s-skipped{background:var(--skipped)}.swatch.s-blocked{background:var(--blocked)}
        .swatch.s-cancelled{background:var(--cancelled)}.swatch.s-timeout{background:var(--timeout)}
        .swatch.s-tempfail{background:var(--waiting)}.swatch.s-interrupted{background:var(--cancelled)}
        .fg-0{color:#6e7781}.fg-1{color:#cf222e}.fg-2{color:#1a7f37}.fg-3{color:#9a6700}.fg-4{color:#0969da}
        .fg-5{color:#8250df}.fg-6{color:#1b7c83}.fg-7{color:var(--muted)}.fg-8{color:#8c959f}.fg-9{color:#fa4549}
        .fg-10{color:#2da44e}.fg-11{color:#bf8700}.fg-12{color:#218bff}.fg-13{color:#a475f9}.fg-14{color:#3192aa}.fg-15{color:var(--fg)}
        .bg-0{background:#24292f;color:#fff}.bg-1{background:#ffebe9}.bg-2{background:#dafbe1}.bg-3{background:#fff8c5}
        .bg-4{background:#ddf4ff}.bg-5{background:#fbefff}.bg-6{background:#d8f3f6}.bg-7{background:#eaeef2}
        .bg-8{background:#57606a;color:#fff}.bg-9{background:#ffcecb}.bg-10{background:#aceebb}.bg-11{background:#fae17d}
        .bg-12{background:#b6e3ff}.bg-13{background:#ecd8ff}.bg-14{background:#b3f0ff}.bg-15{background:#fff;color:#000}
        @media (prefers-color-scheme:dark){.fg-0{color:#8b949e}.fg-1{color:#ff7b72}.fg-2{color:#3fb950}.fg-3{color:#d29922}
        .fg-4{color:#58a6ff}.fg-5{color:#bc8cff}.fg-6{color:#39c5cf}.fg-9{color:#ffa198}.fg-10{color:#56d364}.fg-11{color:#e3b341}
        .fg-12{color:#79c0ff}.fg-13{color:#d2a8ff}.fg-14{color:#56d4dd}
        .bg-1{background:#5d0f12}.bg-2{background:#033a16}.bg-3{background:#4b3800}.bg-4{background:#0c2d6b}
        .bg-5{background:#3c1e70}.bg-6{background:#0b3d42}.bg-7{background:#30363d}}
        .b{font-weight:700}.d{opacity:.7}.i{font-style:italic}.u{text-decoration:underline}
        @media (max-width:600px){main{padding:8px 10px 40px}th,td{padding:4px 5px}h1{font-size:1.25rem}
        td{white-space:normal}td.actions form{display:block;margin:0 0 4px}
        table.underway :is(th,td):nth-child(2),table.failures :is(th,td):nth-child(2),
        table.periodic :is(th,td):nth-child(2),table.history :is(th,td):nth-child(2),
        table.history :is(th,td):nth-child(4),table.history :is(th,td):nth-child(5),
        table.occurrences :is(th,td):nth-child(4),table.occurrences :is(th,td):nth-child(5),
        table.attempts :is(th,td):nth-child(3),table.attempts :is(th,td):nth-child(5){display:none}
        table.periodic a.muted{display:block;overflow-wrap:anywhere;font-size:.8rem}td.wrap{min-width:6em}
        :is(table.history,table.occurrences) td:first-child a{overflow-wrap:anywhere}
        article.job header .actions{margin-left:0;width:100%}}
        body.report header.top nav{display:none}
        """#
}
