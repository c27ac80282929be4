// Package export writes a session for people who do not run arbor: one
// self-contained HTML page, readable Markdown, or a linear JSONL session that
// pi opens.
//
// Use: HTML, Markdown or JSONL(w, log, Options{}) writes the session (or the
// branch Options.Leaf ends) to w (ExampleMarkdown).
//
// # The page
//
// HTML writes one file with its CSS and JavaScript inlined and nothing to
// fetch: a sidebar with the session's tree (the active path marked, pi's
// filters default, no-tools, user, labeled and all, and search), the
// conversation of the selected path (Markdown rendered, code highlighted,
// tool calls with renderers for read, bash, edit as a diff, write, ls, grep
// and a generic one, thinking and tool output collapsed, compactions and
// branch summaries with what they replaced, images, cursors and labels),
// deep links (#leaf=<id>&entry=<id>, or pi's ?leafId=&targetId=) with
// copy-link buttons, a header with the totals 'arbor stats' prints, a JSONL
// download, light and dark themes, and a print layout.
//
// # Safe by construction
//
//   - The session is data, never markup: one JSON document in a
//     <script type="application/json"> element, with <, >, & and U+2028/U+2029
//     escaped as \u sequences (escapeScript), so no text can close the element.
//     Entries that are not valid JSON are replaced by a stub, so the page
//     always parses.
//   - The page is filled by html/template; nothing is spliced by string
//     replacement, so $& or ${} in a session is only text.
//   - The script builds every node with createElement and sets text with
//     textContent. Markdown is rendered in the page by a small renderer that
//     produces DOM nodes (raw HTML stays text); link URLs are limited to
//     http(s) and mailto, image URLs to data:image/*, and remote images become
//     links, so nothing is loaded from the network.
//   - A Content-Security-Policy meta allows only the page's own script and
//     style, by hash: no inline event handlers, no other scripts, no remote
//     loads, no forms.
//
// Markdown is rendered in the page rather than with goldmark and chroma here
// because the renderer then never produces HTML strings at all (there is no
// sanitizer to get wrong), and because the export stays a copy of the
// session's bytes with escaping: the 100 MB session pi writes is exported in
// about half a second of CPU, while rendering every message server-side
// would cost seconds and double the page. The page renders only the 80
// entries around the one shown and more on request, the tree is virtualized
// (only the rows in view exist), and nothing walks the tree recursively, so
// sessions of tens of thousands of entries and deep chains open at once.
//
// # Markdown and JSONL
//
// Markdown writes the path to the leaf with a heading per message, tool calls
// and results in fences, and summaries as quotes. JSONL writes the same path
// as a new session (new id, parentSession naming the source), as 'arbor fork'
// would, so pi builds the same context from it.
//
// Options.Redact masks secrets (package redact) in every format.
package export
