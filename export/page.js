// arbor's session page. Everything from the session is inserted as text
// (textContent, createTextNode) or through attributes this script sets after
// checking them; no string from the session is ever parsed as markup.
(function () {
  'use strict';
  if (window.performance && performance.mark) performance.mark('arbor-start');
  var D = JSON.parse(document.getElementById('arbor-data').textContent);
  if (window.performance && performance.mark) performance.mark('arbor-parsed');
  var E = D.entries, P = D.parents, N = E.length;
  var byId = new Map();
  var kids = new Array(N);
  var roots = [];
  for (var i = 0; i < N; i++) {
    byId.set(E[i].id, i);
    if (P[i] < 0) roots.push(i); else (kids[P[i]] || (kids[P[i]] = [])).push(i);
  }
  var labels = D.labels || {};
  var cursorAt = new Map();
  (D.cursors || []).forEach(function (c) {
    if (!c.leaf) return;
    var l = cursorAt.get(c.leaf) || [];
    l.push(c.name || c.id);
    cursorAt.set(c.leaf, l);
  });

  // ---- small DOM helpers ----
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text != null) setText(e, String(text));
    return e;
  }
  // Chromium lays out the line breaks of a paragraph in time that grows with
  // the square of its length when the text is a script it breaks by
  // dictionary (2 MB of Thai took minutes, 200 KB seconds). So a text longer
  // than LONG is laid out as blocks of at most RUN characters: each ends after
  // its last newline (where the text broke anyway), else after its last
  // space, else anywhere but inside a surrogate pair.
  var LONG = 20000, RUN = 2000;
  function textNodes(parent, t) {
    if (t.length <= LONG) { parent.appendChild(document.createTextNode(t)); return; }
    for (var i = 0; i < t.length;) {
      var piece = t.slice(i, i + RUN);
      if (i + RUN < t.length) {
        var cut = piece.lastIndexOf('\n') + 1 || piece.lastIndexOf(' ') + 1;
        if (!cut && /[\uD800-\uDBFF]/.test(piece.charAt(RUN - 1))) cut = RUN - 1;
        if (cut) piece = piece.slice(0, cut);
      }
      var b = document.createElement('span');
      b.className = 'run';
      b.textContent = piece;
      parent.appendChild(b);
      i += piece.length;
    }
  }
  function setText(e, t) {
    if (t.length <= LONG) { e.textContent = t; return; }
    e.textContent = '';
    textNodes(e, t);
  }
  function add(parent) {
    for (var i = 1; i < arguments.length; i++) {
      var c = arguments[i];
      if (c == null) continue;
      parent.appendChild(typeof c === 'string' ? document.createTextNode(c) : c);
    }
    return parent;
  }
  function str(v) { return typeof v === 'string' ? v : ''; }
  function msg(e) { return e.type === 'message' && e.message && typeof e.message === 'object' ? e.message : null; }
  function role(e) { var m = msg(e); return m ? str(m.role) : ''; }
  function blocks(c) { return Array.isArray(c) ? c.filter(function (b) { return b && typeof b === 'object'; }) : []; }
  function textOf(c) {
    if (typeof c === 'string') return c;
    return blocks(c).filter(function (b) { return b.type === 'text'; }).map(function (b) { return str(b.text); }).join('\n');
  }
  function failed(r) { return !!r && r !== 'stop' && r !== 'toolUse'; }
  function isMarker(e) { return e.type === 'custom' && str(e.customType).indexOf('arbor.') === 0; }
  function toolOnly(e) {
    var m = msg(e);
    if (!m || m.role !== 'assistant') return false;
    return !/\S/.test(textOf(m.content)) && !failed(m.stopReason);
  }
  function fmtTime(ts) {
    var d = new Date(ts);
    return isNaN(d) ? str(ts) : d.toLocaleString();
  }
  function num(n) { return (Number(n) || 0).toLocaleString('en-US'); }

  // ---- URLs: only http(s), mailto and data:image ----
  function safeURL(u, image) {
    u = str(u).replace(/[\u0000-\u0020\u007f-\u009f]/g, '');
    if (image) return /^data:image\/[a-z0-9.+-]+[;,]/i.test(u) ? u : null;
    return /^(https?:|mailto:)/i.test(u) ? u : null;
  }
  function imageSrc(mime, data) {
    mime = str(mime); data = str(data);
    if (!/^image\/[a-z0-9.+-]+$/i.test(mime) || !/^[A-Za-z0-9+\/=\s]*$/.test(data)) return null;
    return 'data:' + mime + ';base64,' + data;
  }

  // ---- syntax highlighting into spans ----
  var KW = {
    js: 'async await break case catch class const continue default delete do else export extends false finally for from function if import in instanceof let new null of return super switch this throw true try typeof undefined var void while yield interface type enum implements',
    go: 'break case chan const continue default defer else fallthrough for func go goto if import interface map package range return select struct switch type var nil true false iota',
    py: 'and as assert async await break class continue def del elif else except False finally for from global if import in is lambda None nonlocal not or pass raise return True try while with yield self',
    sh: 'if then else elif fi for while until do done case esac in function return export local echo cd exit set',
    rs: 'as async await break const continue crate else enum extern false fn for if impl in let loop match mod move mut pub ref return self Self static struct super trait true type unsafe use where while',
    c: 'auto break case char const continue default do double else enum extern float for goto if int long register return short signed sizeof static struct switch typedef union unsigned void volatile while class public private protected new delete this true false null namespace template using bool',
    json: 'true false null'
  };
  var LANG = { javascript: 'js', ts: 'js', typescript: 'js', jsx: 'js', tsx: 'js', mjs: 'js', cjs: 'js', golang: 'go', python: 'py', bash: 'sh', shell: 'sh', zsh: 'sh', console: 'sh', rust: 'rs', cpp: 'c', cc: 'c', h: 'c', hpp: 'c', java: 'c', cs: 'c', kt: 'c', swift: 'c', jsonl: 'json', yaml: 'sh', yml: 'sh', toml: 'sh', rb: 'py', ruby: 'py' };
  function langOf(name) {
    name = str(name).toLowerCase();
    var m = /\.([a-z0-9]+)$/.exec(name);
    if (m) name = m[1];
    if (KW[name]) return name;
    return LANG[name] || '';
  }
  var kwCache = {};
  function highlight(codeEl, text, lang) {
    lang = langOf(lang);
    if (!lang || text.length > 200000) { setText(codeEl, text); return; }
    var kws = kwCache[lang] || (kwCache[lang] = new Set(KW[lang].split(' ')));
    var hash = lang === 'py' || lang === 'sh';
    // Every token that starts also ends (an unclosed string ends with its
    // line, an unclosed comment or template with the text), so no part of
    // the text is scanned twice.
    var re = hash
      ? /(#[^\n]*)|("(?:[^"\\\n]|\\.)*"?|'(?:[^'\\\n]|\\.)*'?)|(\b\d[\d_.xXa-fA-F]*\b)|([A-Za-z_$][\w$]*)/g
      : /(\/\/[^\n]*|\/\*[\s\S]*?(?:\*\/|$(?![\s\S])))|("(?:[^"\\\n]|\\.)*"?|'(?:[^'\\\n]|\\.)*'?|`(?:[^`\\]|\\.)*`?)|(\b\d[\d_.xXa-fA-F]*\b)|([A-Za-z_$][\w$]*)/g;
    var last = 0, m, frag = document.createDocumentFragment(), plain = '';
    function span(cls, t) {
      if (plain) { frag.appendChild(document.createTextNode(plain)); plain = ''; }
      frag.appendChild(el('span', cls, t));
    }
    while ((m = re.exec(text))) {
      plain += text.slice(last, m.index);
      last = re.lastIndex;
      if (m[1]) span('tk-com', m[1]);
      else if (m[2]) span('tk-str', m[2]);
      else if (m[3]) span('tk-num', m[3]);
      else if (kws.has(m[4])) span('tk-kw', m[4]);
      else if (text.charAt(last) === '(') span('tk-fn', m[4]);
      else plain += m[4];
    }
    plain += text.slice(last);
    if (plain) frag.appendChild(document.createTextNode(plain));
    codeEl.appendChild(frag);
  }
  // codeBlock shows text as code; past 100,000 characters it shows the start
  // and a button for the rest, so one huge output cannot stall the page.
  var CODEMAX = 100000;
  function codeBlock(text, lang, wrap) {
    var pre = el('pre', wrap ? 'wrap' : ''), c = el('code');
    text = str(text);
    if (text.length <= CODEMAX) {
      highlight(c, text, lang);
      pre.appendChild(c);
      return pre;
    }
    setText(c, text.slice(0, CODEMAX));
    pre.appendChild(c);
    var more = el('button', 'rest', 'Show the other ' + num(text.length - CODEMAX) + ' characters');
    more.type = 'button';
    more.addEventListener('click', function () { setText(c, text); more.remove(); });
    return add(el('div'), pre, more);
  }

  // ---- Markdown into DOM nodes; raw HTML stays text ----
  var MAXDEPTH = 6;
  function markdown(src, depth) {
    depth = depth || 0;
    var root = el('div', depth ? '' : 'md');
    var lines = str(src).replace(/\r\n?/g, '\n').split('\n');
    var i = 0, para = [];
    function flush() {
      if (para.length) { root.appendChild(inline(el('p'), para.join('\n'), 0)); para = []; }
    }
    while (i < lines.length) {
      var ln = lines[i], m;
      if (!/\S/.test(ln)) { flush(); i++; continue; }
      if ((m = /^ {0,3}(`{3,}|~{3,})\s*([^\s`]*)[^`]*$/.exec(ln))) {
        flush();
        var fenceCh = m[1].charAt(0), fenceLen = m[1].length, body = [];
        i++;
        while (i < lines.length) {
          var c = /^ {0,3}(`{3,}|~{3,})\s*$/.exec(lines[i]);
          if (c && c[1].charAt(0) === fenceCh && c[1].length >= fenceLen) { i++; break; }
          body.push(lines[i]); i++;
        }
        root.appendChild(codeBlock(body.join('\n'), m[2]));
        continue;
      }
      if ((m = /^ {0,3}(#{1,6})\s+(.*?)(?:\s+#+)?\s*$/.exec(ln))) {
        flush();
        root.appendChild(inline(el('h' + Math.min(6, m[1].length + 2)), m[2], 0));
        i++; continue;
      }
      if (/^ {0,3}([-*_])(?:\s*\1){2,}\s*$/.test(ln)) { flush(); root.appendChild(el('hr')); i++; continue; }
      if (/^ {0,3}>/.test(ln) && depth < MAXDEPTH) {
        flush();
        var q = [];
        while (i < lines.length && /^ {0,3}>/.test(lines[i])) { q.push(lines[i].replace(/^ {0,3}> ?/, '')); i++; }
        root.appendChild(add(el('blockquote'), markdown(q.join('\n'), depth + 1)));
        continue;
      }
      if ((m = /^( {0,3})([-*+]|\d{1,9}[.)])\s+/.exec(ln)) && depth < MAXDEPTH) {
        flush();
        var ordered = /\d/.test(m[2]), list = el(ordered ? 'ol' : 'ul'), item = null;
        if (ordered && parseInt(m[2], 10) !== 1) list.start = parseInt(m[2], 10);
        var indent = m[1].length;
        while (i < lines.length) {
          var l2 = lines[i], mm = /^( {0,3})([-*+]|\d{1,9}[.)])\s+(.*)$/.exec(l2);
          if (mm && mm[1].length <= indent + 1 && /\d/.test(mm[2]) === ordered) {
            if (item) list.appendChild(add(el('li'), markdown(item.join('\n'), depth + 1)));
            item = [mm[3]];
          } else if (/^\s+\S/.test(l2) || (!/\S/.test(l2) && i + 1 < lines.length && /^\s+\S/.test(lines[i + 1]))) {
            item.push(l2.replace(/^ {1,4}/, ''));
          } else if (/\S/.test(l2) && !/^ {0,3}([-*+]|\d{1,9}[.)])\s/.test(l2) && item && /\S/.test(lines[i - 1])) {
            item.push(l2);
          } else break;
          i++;
        }
        if (item) list.appendChild(add(el('li'), markdown(item.join('\n'), depth + 1)));
        root.appendChild(list);
        continue;
      }
      if (ln.indexOf('|') >= 0 && i + 1 < lines.length && /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/.test(lines[i + 1]) && lines[i + 1].indexOf('-') >= 0) {
        flush();
        var table = el('table'), thead = el('thead'), tbody = el('tbody');
        thead.appendChild(row(ln, 'th'));
        i += 2;
        while (i < lines.length && lines[i].indexOf('|') >= 0 && /\S/.test(lines[i])) { tbody.appendChild(row(lines[i], 'td')); i++; }
        root.appendChild(add(table, thead, tbody));
        continue;
      }
      para.push(ln); i++;
    }
    flush();
    return root;
  }
  function row(ln, tag) {
    var tr = el('tr');
    ln.trim().replace(/^\|/, '').replace(/\|$/, '').split('|').forEach(function (cell) {
      tr.appendChild(inline(el(tag), cell.trim(), 0));
    });
    return tr;
  }
  // inline appends the inline Markdown of s to node.
  function inline(node, s, depth) {
    var buf = '', i = 0, m;
    function text() { if (buf) { textNodes(node, buf); buf = ''; } }
    while (i < s.length) {
      var ch = s.charAt(i), rest = s.slice(i, i + 2048);
      if (ch === '\\' && /[!-\/:-@\[-`{-~]/.test(s.charAt(i + 1))) { buf += s.charAt(i + 1); i += 2; continue; }
      if (ch === '`') {
        // A code span closes at the next run of exactly as many backticks;
        // an unclosed run is text. Linear in the text, whatever it holds.
        var n = 1;
        while (s.charAt(i + n) === '`') n++;
        var j = i + n, close = -1;
        while ((j = s.indexOf('`', j)) >= 0) {
          var k = j;
          while (s.charAt(k) === '`') k++;
          if (k - j === n) { close = j; break; }
          j = k;
        }
        if (close > 0) {
          var code = s.slice(i + n, close).replace(/\n/g, ' ');
          if (/^ [\s\S]*\S[\s\S]* $/.test(code)) code = code.slice(1, -1);
          text(); node.appendChild(el('code', '', code)); i = close + n; continue;
        }
        buf += s.slice(i, i + n); i += n; continue;
      }
      if ((ch === '!' || ch === '[') && (m = /^(!?)\[([^\[\]]*)\]\(\s*(<[^<>\n]*>|[^\s()]*(?:\([^\s()]*\)[^\s()]*)*)(?:\s+("[^"]*"|'[^']*'|\([^)]*\)))?\s*\)/.exec(rest))) {
        text();
        var url = m[3].replace(/^<([\s\S]*)>$/, '$1'), title = m[4] ? m[4].slice(1, -1) : '';
        if (m[1]) {
          var src = safeURL(url, true);
          if (src) {
            var img = el('img');
            img.alt = m[2]; if (title) img.title = title; img.src = src;
            node.appendChild(img);
          } else {
            var href = safeURL(url);
            var label = '[image: ' + (m[2] || url) + ']';
            node.appendChild(href ? link(href, label, title) : document.createTextNode(label));
          }
        } else {
          var h = safeURL(url);
          if (h) node.appendChild(inline(link(h, null, title), m[2], depth + 1));
          else { node.appendChild(document.createTextNode(m[2])); }
        }
        i += m[0].length; continue;
      }
      if (ch === '<' && (m = /^<((?:https?:|mailto:)[^\s<>]+)>/i.exec(rest))) {
        text(); node.appendChild(link(safeURL(m[1]) || '#', m[1])); i += m[0].length; continue;
      }
      if ((ch === 'h') && /[^\w]|^$/.test(s.charAt(i - 1) || ' ') && (m = /^https?:\/\/[^\s<>"]*[^\s<>".,:;'")\]]/.exec(rest))) {
        text(); node.appendChild(link(m[0], m[0])); i += m[0].length; continue;
      }
      if ((ch === '*' || ch === '_' || ch === '~') && depth < MAXDEPTH) {
        var d = s.slice(i, i + 2) === ch + ch ? ch + ch : ch;
        if (ch === '~' && d.length < 2) { buf += ch; i++; continue; }
        var end = s.indexOf(d, i + d.length);
        var inner = end > 0 ? s.slice(i + d.length, end) : '';
        if (end > 0 && /^\S/.test(inner) && /\S$/.test(inner) && (ch !== '_' || !/\w/.test(s.charAt(i - 1) || ''))) {
          text();
          node.appendChild(inline(el(ch === '~' ? 'del' : d.length === 2 ? 'strong' : 'em'), inner, depth + 1));
          i = end + d.length; continue;
        }
      }
      buf += ch; i++;
    }
    text();
    return node;
  }
  function link(href, text, title) {
    var a = el('a', '', text);
    a.href = href;
    a.rel = 'noopener noreferrer nofollow';
    a.target = '_blank';
    if (title) a.title = title;
    return a;
  }

  // ---- collapsible text, filled when opened ----
  function collapsible(summary, fill, open) {
    var d = el('details'), s = el('summary', '', summary), filled = false;
    d.appendChild(s);
    function ensure() { if (!filled) { filled = true; var c = fill(); if (c) d.appendChild(c); } }
    d.addEventListener('toggle', function () { if (d.open) ensure(); });
    d._fill = ensure;
    if (open) { ensure(); d.open = true; }
    return d;
  }
  function lineCount(t) { var n = 1; for (var i = 0; i < t.length; i++) if (t.charCodeAt(i) === 10) n++; return n; }

  // ---- tool renderers ----
  function args(b) { return b && b.arguments && typeof b.arguments === 'object' ? b.arguments : {}; }
  function diffBlock(text) {
    var pre = el('pre'), c = el('code');
    str(text).split('\n').forEach(function (l) {
      var cls = /^\+(?!\+\+)/.test(l) ? 'd-add' : /^-(?!--)/.test(l) ? 'd-del' : /^@@/.test(l) ? 'd-hunk' : '';
      c.appendChild(cls ? el('span', cls, l) : document.createTextNode(l + '\n'));
    });
    pre.appendChild(c);
    return pre;
  }
  function editDiff(a) {
    var edits = Array.isArray(a.edits) ? a.edits : [{ oldText: a.oldText, newText: a.newText }];
    var out = [];
    edits.forEach(function (ed) {
      if (!ed || typeof ed !== 'object') return;
      out.push('@@ ' + str(a.path));
      str(ed.oldText).split('\n').forEach(function (l) { out.push('-' + l); });
      str(ed.newText).split('\n').forEach(function (l) { out.push('+' + l); });
    });
    return out.join('\n');
  }
  // callView renders a tool call inside an assistant message.
  function callView(b) {
    var a = args(b), name = str(b.name), box = el('div', 'tool');
    var head = add(el('div'), el('span', 'tname', name || 'tool'));
    box.appendChild(head);
    if (D.options.noTools) return box;
    switch (name) {
      case 'bash':
        head.appendChild(document.createTextNode(' '));
        head.appendChild(el('code', '', '$ ' + str(a.command)));
        break;
      case 'read': case 'ls': case 'find':
        head.appendChild(document.createTextNode(' ' + str(a.path) + (a.offset ? ':' + a.offset : '') + (a.limit ? ' (+' + a.limit + ')' : '')));
        break;
      case 'grep':
        head.appendChild(document.createTextNode(' '));
        head.appendChild(el('code', '', str(a.pattern)));
        head.appendChild(document.createTextNode(' in ' + (str(a.path) || '.')));
        break;
      case 'write':
        head.appendChild(document.createTextNode(' ' + str(a.path)));
        box.appendChild(collapsible('content · ' + lineCount(str(a.content)) + ' lines', function () { return codeBlock(str(a.content), str(a.path)); }, showTools));
        break;
      case 'edit':
        head.appendChild(document.createTextNode(' ' + str(a.path)));
        box.appendChild(collapsible('diff', function () { return diffBlock(editDiff(a)); }, showTools));
        break;
      default:
        var sum = foreignSummary(name, b.arguments);
        if (sum.command) { head.appendChild(document.createTextNode(' ')); head.appendChild(el('code', '', '$ ' + sum.command)); }
        else if (sum.text) head.appendChild(document.createTextNode(' ' + sum.text));
        box.appendChild(collapsible('arguments', function () { return codeBlock(JSON.stringify(b.arguments, null, 2) || '', 'json'); }, showTools));
    }
    return box;
  }
  // Another agent's tools (Claude Code's "Bash", Codex's "shell") are read
  // through the table of tool-argument shapes the exporter put in D.tools
  // (internal/toolargs): the first field of each list that holds a value.
  var toolShapes = {};
  (D.tools || []).forEach(function (row) { (row.names || []).forEach(function (n) { toolShapes[n] = row; }); });
  function foreignSummary(name, raw) {
    var shape = toolShapes[name] || toolShapes[name.toLowerCase()], a = raw && typeof raw === 'object' && !Array.isArray(raw) ? raw : null;
    if (!shape || !a) return {};
    function first(keys) { for (var i = 0; keys && i < keys.length; i++) { var v = a[keys[i]]; if (typeof v === 'string' && v) return v; } return ''; }
    function argv(keys) {
      for (var i = 0; keys && i < keys.length; i++) {
        var v = a[keys[i]];
        if (typeof v === 'string' && v) return v;
        if (Array.isArray(v) && v.length && v.every(function (x) { return typeof x === 'string'; })) {
          if (v.length === 3 && /(^|\/)(sh|bash|zsh|dash)$/.test(v[0]) && (v[1] === '-c' || v[1] === '-lc')) return v[2];
          return v.map(function (x) { return x && /^[-\w./=:,+@%]+$/.test(x) ? x : "'" + x.replace(/'/g, "'\\''") + "'"; }).join(' ');
        }
      }
      return '';
    }
    var command = argv(shape.command);
    if (command) return { command: command };
    var path = first(shape.path), pattern = first(shape.pattern);
    if (!path && shape.patch) {
      var seen = {}, files = [];
      first(shape.patch).split('\n').forEach(function (l) {
        var mm = /^(?:\*\*\* (?:Add|Update|Delete) File: |\*\*\* Move to: |\+\+\+ b\/)(.*)$/.exec(l.replace(/\r$/, ''));
        var f = mm && mm[1].trim();
        if (f && !seen[f]) { seen[f] = true; files.push(f); }
      });
      path = files.join(', ');
    }
    if (pattern) return { text: path ? pattern + ' in ' + path : pattern };
    if (path) return { text: path };
    var subject = first(shape.subject);
    if (subject) return { text: subject };
    for (var i = 0; shape.items && i < shape.items.length; i++) {
      var list = a[shape.items[i]];
      if (Array.isArray(list)) return { text: list.length === 1 ? '1 item' : list.length + ' items' };
    }
    return {};
  }
  // resultView renders a tool result with the renderer of its tool.
  function resultView(m, call, e) {
    var name = str(m.toolName) || (call ? str(call.name) : ''), a = args(call);
    var text = textOf(m.content), box = el('div', 'tool' + (m.isError ? ' err' : ''));
    // What an importer kept beside the result (a Claude Code tool_reference:
    // the tool it loads), which pi's content has no block for.
    var notes = (e && Array.isArray(e.sourceBlocks) ? e.sourceBlocks : []).map(function (sb) {
      if (!sb || typeof sb !== 'object' || !sb.type) return '';
      return sb.type === 'tool_reference' && sb.tool_name ? '[tool_reference: ' + str(sb.tool_name) + ']' : '[' + str(sb.type) + ']';
    }).filter(Boolean).join('\n');
    if (notes) text = text ? text + '\n' + notes : notes;
    box.appendChild(add(el('div'), el('span', 'tname', name || 'tool'), ' result' + (m.isError ? ' (error)' : '')));
    var details = m.details && typeof m.details === 'object' ? m.details : {};
    var label = 'output · ' + lineCount(text) + ' lines';
    var fill;
    if (name === 'edit' && typeof details.diff === 'string') {
      label = 'diff';
      fill = function () { return add(el('div'), diffBlock(details.diff), text ? codeBlock(text, '', true) : null); };
    } else if (name === 'read') {
      fill = function () { return codeBlock(text, str(a.path)); };
    } else if (name === 'bash') {
      fill = function () { return codeBlock(text, '', true); };
    } else {
      fill = function () { return codeBlock(text, '', true); };
    }
    box.appendChild(collapsible(label, fill, showTools));
    blocks(m.content).forEach(function (b) {
      if (b.type === 'image') { var src = imageSrc(b.mimeType, b.data); if (src) { var img = el('img', 'img'); img.src = src; img.alt = 'tool image'; box.appendChild(img); } }
    });
    return box;
  }

  // ---- the path and its rendering ----
  var showTools = false, sel = { leaf: -1, target: -1 }, path = [], pathIndex = new Map();
  var conv = document.getElementById('conv');
  var windowStart = 0, windowEnd = 0, CHUNK = 40;
  var calls = new Map(), compactedBy = new Map();

  function pathTo(i) {
    var p = [];
    for (var x = i; x >= 0; x = P[x]) p.push(x);
    return p.reverse();
  }
  function newestLeaf(i) {
    var best = i, bestTs = '', stack = [i];
    while (stack.length) {
      var x = stack.pop(), k = kids[x];
      if (!k) { var ts = str(E[x].timestamp); if (ts >= bestTs) { best = x; bestTs = ts; } continue; }
      for (var j = 0; j < k.length; j++) stack.push(k[j]);
    }
    return best;
  }

  function entryView(i) {
    var e = E[i], m = msg(e), r = m ? str(m.role) : '', box = el('article', 'entry');
    box.id = 'entry-' + e.id;
    box.dataset.idx = i;
    var head = el('div', 'ehead'), who = el('span', 'who');
    head.appendChild(who);
    head.appendChild(el('span', '', fmtTime(e.timestamp)));
    if (labels[e.id]) head.appendChild(el('span', 'chip', labels[e.id]));
    (cursorAt.get(e.id) || []).forEach(function (c) { head.appendChild(el('span', 'chip cur', '@' + c)); });
    var cb = compactedBy.get(i);
    if (cb !== undefined) { box.classList.add('compacted'); head.appendChild(el('span', '', 'summarized by a compaction')); }
    var lb = el('button', 'link', 'link');
    lb.type = 'button'; lb.title = 'Copy a link to this entry';
    lb.dataset.copy = e.id;
    head.appendChild(lb);
    box.appendChild(head);
    if (e.arborUnreadable) { who.textContent = e.type; box.appendChild(el('div', 'error', 'This line of the session could not be read.')); return box; }
    switch (e.type) {
      case 'message':
        who.textContent = r || 'message';
        messageBody(box, m, e);
        if (r === 'user') box.classList.add('user');
        break;
      case 'compaction':
        who.textContent = 'compaction';
        box.classList.add('summary');
        var cov = (D.covers || {})[e.id];
        if (cov) {
          var note = el('div', '', 'Replaces ' + cov[2] + ' entries, from ');
          note.appendChild(jump(cov[0])); note.appendChild(document.createTextNode(' to ')); note.appendChild(jump(cov[1]));
          note.appendChild(document.createTextNode(' · ' + num(e.tokensBefore) + ' tokens before'));
          box.appendChild(note);
        }
        box.appendChild(collapsible('summary', function () { return markdown(e.summary); }, true));
        break;
      case 'branch_summary':
        who.textContent = 'branch summary';
        box.classList.add('summary');
        var from = byId.get(e.fromId);
        var bn = el('div', '', 'Summarizes ');
        if (from !== undefined) {
          var n = 0;
          var onPath = new Set(pathTo(i));
          for (var x = from; x >= 0 && !onPath.has(x); x = P[x]) n++;
          // pi before 1.6.0 wrote the branch point as fromId, not the leaf
          // that was left: the entries summarized are not known then.
          bn.appendChild(document.createTextNode(n > 0 ? n + ' entries of the branch ending at ' : 'a branch left at '));
          var b = el('button', 'link', str(e.fromId)); b.type = 'button'; b.dataset.select = e.fromId;
          bn.appendChild(b);
        } else bn.appendChild(document.createTextNode('another branch'));
        box.appendChild(bn);
        box.appendChild(collapsible('summary', function () { return markdown(e.summary); }, true));
        break;
      case 'model_change':
        who.textContent = 'model'; box.classList.add('note');
        box.appendChild(el('div', '', 'Model changed to ' + str(e.provider) + '/' + str(e.modelId)));
        break;
      case 'thinking_level_change':
        who.textContent = 'thinking'; box.classList.add('note');
        box.appendChild(el('div', '', 'Thinking level ' + str(e.thinkingLevel)));
        break;
      case 'label':
        who.textContent = 'label'; box.classList.add('note');
        box.appendChild(el('div', '', (e.label ? 'Label “' + str(e.label) + '” on ' : 'Label cleared on ') + str(e.targetId)));
        break;
      case 'session_info':
        who.textContent = 'name'; box.classList.add('note');
        box.appendChild(el('div', '', 'Session named “' + str(e.name) + '”'));
        break;
      case 'custom_message':
        who.textContent = str(e.customType) || 'custom message';
        if (e.display) box.appendChild(contentView(e.content));
        else box.classList.add('note');
        break;
      default:
        who.textContent = e.type === 'custom' ? (isMarker(e) ? 'arbor ' + str(e.customType).slice(6) : 'custom ' + str(e.customType)) : str(e.type);
        box.classList.add('note');
        box.appendChild(collapsible('data', function () { return codeBlock(JSON.stringify(e, null, 2), 'json'); }, false));
    }
    return box;
  }
  function jump(id) {
    var b = el('button', 'link', id); b.type = 'button'; b.dataset.jump = id; return b;
  }
  function contentView(c) {
    var d = el('div');
    if (typeof c === 'string') { d.appendChild(markdown(c)); return d; }
    blocks(c).forEach(function (b) {
      if (b.type === 'text') d.appendChild(markdown(b.text));
      else if (b.type === 'image') {
        var src = imageSrc(b.mimeType, b.data);
        if (src) { var img = el('img', 'img'); img.alt = 'image'; img.src = src; d.appendChild(img); }
      }
    });
    return d;
  }
  function messageBody(box, m, e) {
    var r = str(m.role);
    if (r === 'assistant') {
      if (m.model) box.querySelector('.ehead').appendChild(el('span', '', str(m.provider) + '/' + str(m.model)));
      if (typeof m.content === 'string') box.appendChild(markdown(m.content));
      blocks(m.content).forEach(function (b) {
        if (b.type === 'text') box.appendChild(markdown(b.text));
        else if (b.type === 'thinking') {
          var t = str(b.thinking);
          if (!t.trim()) return; // an empty block (Claude Code writes them) says nothing
          var tb = collapsible('thinking · ' + lineCount(t) + ' lines', function () { return el('div', 'thinking', t); }, false);
          tb.classList.add('thinking-block');
          box.appendChild(tb);
        } else if (b.type === 'toolCall') box.appendChild(callView(b));
      });
      if (failed(m.stopReason)) box.appendChild(el('div', 'error', 'Stopped: ' + str(m.stopReason) + (m.errorMessage ? ' — ' + str(m.errorMessage) : '')));
    } else if (r === 'toolResult') {
      box.appendChild(resultView(m, calls.get(str(m.toolCallId)), e));
    } else if (r === 'bashExecution') {
      var t = '$ ' + str(m.command) + '\n' + str(m.output);
      if (m.exitCode != null && m.exitCode !== 0) t += '\n(exit code ' + m.exitCode + ')';
      box.appendChild(codeBlock(t, '', true));
    } else if (r === 'system') {
      box.appendChild(collapsible('system prompt', function () {
        var d = el('div'), t = textOf(m.content);
        if (t) d.appendChild(codeBlock(t, '', true));
        var secs = m.sections && typeof m.sections === 'object' ? m.sections : {};
        Object.keys(secs).forEach(function (k) {
          d.appendChild(el('div', 'tname', k + (secs[k] === null ? ' (removed)' : '')));
          if (secs[k] !== null) d.appendChild(codeBlock(typeof secs[k] === 'string' ? secs[k] : JSON.stringify(secs[k], null, 2), '', true));
        });
        ['toolsAdded', 'toolsRemoved'].forEach(function (k) {
          if (Array.isArray(m[k]) && m[k].length) d.appendChild(el('div', '', (k === 'toolsAdded' ? 'Tools added: ' : 'Tools removed: ') + m[k].map(function (x) { return typeof x === 'string' ? x : str(x && x.name); }).join(', ')));
        });
        return d;
      }, false));
    } else if (r === 'custom' || r === 'user' || r === 'branchSummary' || r === 'compactionSummary') {
      box.appendChild(contentView(r === 'branchSummary' || r === 'compactionSummary' ? m.summary : m.content));
    } else {
      box.appendChild(collapsible('message', function () { return codeBlock(JSON.stringify(m, null, 2), 'json'); }, false));
    }
  }

  function moreButton(label, at) {
    var b = el('button', 'more', label); b.type = 'button'; b.dataset.more = at; return b;
  }
  function renderRange(a, b) {
    var f = document.createDocumentFragment();
    for (var k = a; k < b; k++) f.appendChild(entryView(path[k]));
    return f;
  }
  function paintPath(targetPos) {
    conv.textContent = '';
    windowStart = Math.max(0, targetPos - CHUNK);
    windowEnd = Math.min(path.length, targetPos + CHUNK);
    if (windowStart > 0) conv.appendChild(moreButton('Show ' + windowStart + ' earlier entries', 'up'));
    conv.appendChild(renderRange(windowStart, windowEnd));
    if (windowEnd < path.length) conv.appendChild(moreButton('Show ' + (path.length - windowEnd) + ' later entries', 'down'));
    if (!path.length) conv.appendChild(el('p', '', 'This session has no entries on this path.'));
  }
  function grow(dir) {
    var main = document.getElementById('main');
    if (dir === 'up' && windowStart > 0) {
      var a = Math.max(0, windowStart - CHUNK), before = main.scrollHeight;
      var btn = conv.firstChild;
      conv.insertBefore(renderRange(a, windowStart), btn.nextSibling);
      windowStart = a;
      if (a === 0) conv.removeChild(btn); else btn.textContent = 'Show ' + a + ' earlier entries';
      main.scrollTop += main.scrollHeight - before;
    } else if (dir === 'down' && windowEnd < path.length) {
      var z = Math.min(path.length, windowEnd + CHUNK), last = conv.lastChild;
      conv.insertBefore(renderRange(windowEnd, z), last);
      windowEnd = z;
      if (z === path.length) conv.removeChild(last); else last.textContent = 'Show ' + (path.length - z) + ' later entries';
    }
  }
  // select shows the path to leaf and scrolls to target (both entry indexes).
  function select(leaf, target, noHash) {
    if (leaf < 0 && N) leaf = N - 1;
    sel.leaf = leaf; sel.target = target;
    path = leaf >= 0 ? pathTo(leaf) : [];
    pathIndex = new Map();
    calls = new Map(); compactedBy = new Map();
    path.forEach(function (x, k) {
      pathIndex.set(x, k);
      var m = msg(E[x]);
      if (m && m.role === 'assistant') blocks(m.content).forEach(function (b) { if (b.type === 'toolCall') calls.set(str(b.id), b); });
    });
    path.forEach(function (x) {
      var cov = E[x].type === 'compaction' && (D.covers || {})[E[x].id];
      if (!cov) return;
      var a = pathIndex.get(byId.get(cov[0])), b = pathIndex.get(byId.get(cov[1]));
      if (a === undefined || b === undefined) return;
      for (var k = a; k <= b; k++) if (E[path[k]].type !== 'compaction') compactedBy.set(path[k], x);
    });
    // Without a target the page opens at the top: the header (name, folder,
    // cost) and the path from its first entry, the leaf a scroll away.
    var pos = pathIndex.has(target) ? pathIndex.get(target) : 0;
    paintPath(Math.max(0, pos));
    tree.refresh(true);
    if (!noHash && leaf >= 0) {
      var h = '#leaf=' + encodeURIComponent(E[leaf].id) + (target >= 0 && target !== leaf ? '&entry=' + encodeURIComponent(E[target].id) : '');
      if (location.hash !== h) history.replaceState(null, '', h);
    }
    var node = target >= 0 && document.getElementById('entry-' + E[target].id);
    var main = document.getElementById('main');
    if (node) {
      document.querySelectorAll('.entry.target').forEach(function (n) { n.classList.remove('target'); });
      node.classList.add('target');
      node.scrollIntoView({ block: 'start' });
      main.scrollTop -= document.getElementById('toolbar').offsetHeight;
    } else main.scrollTop = 0;
  }
  // Scrolling near either end of the painted window paints the next entries,
  // so every entry of the path is reached by scrolling alone.
  document.getElementById('main').addEventListener('scroll', function () {
    var main = this, near = Math.max(200, main.clientHeight);
    if (windowEnd < path.length && main.scrollTop + main.clientHeight > main.scrollHeight - near) grow('down');
    else if (windowStart > 0 && main.scrollTop < near) grow('up');
  }, { passive: true });
  function jumpTo(i) { select(pathIndex.has(i) ? sel.leaf : newestLeaf(i), i); }

  // ---- the tree, virtualized: only the rows in view are in the DOM ----
  var treeEl = document.getElementById('tree'), space = document.getElementById('tree-space');
  var status = document.getElementById('tree-status'), searchEl = document.getElementById('search');
  var RH = 22;
  var tree = {
    filter: 'default', query: '', rows: [], indent: null, last: null, onPath: new Set(),
    texts: null,
    visible: function (i) {
      var e = E[i];
      switch (this.filter) {
        case 'all': return true;
        case 'labeled': return !!labels[e.id];
        case 'user': return role(e) === 'user';
      }
      // as 'arbor tree' and pi 1.6.0 hide them
      if (e.type === 'label' || e.type === 'custom' || e.type === 'model_change' || e.type === 'thinking_level_change' || e.type === 'session_info' || e.type === 'context_edit' || e.type === 'usage') return false;
      if (this.filter === 'no-tools' && role(e) === 'toolResult') return false;
      if (i !== sel.leaf && toolOnly(e)) return false;
      return true;
    },
    text: function (i) {
      if (!this.texts) this.texts = new Array(N);
      var t = this.texts[i];
      if (t !== undefined) return t;
      var e = E[i], m = msg(e), parts = [e.type, e.id, labels[e.id] || ''];
      if (m) {
        parts.push(str(m.role), textOf(m.content), str(m.command), str(m.output), str(m.toolName));
        blocks(m.content).forEach(function (b) { if (b.type === 'toolCall') parts.push(str(b.name), JSON.stringify(b.arguments || '')); });
      } else parts.push(str(e.summary), str(e.name), str(e.label), str(e.customType), textOf(e.content));
      t = parts.join(' ').toLowerCase();
      this.texts[i] = t;
      return t;
    },
    matches: function (i, toks) {
      var t = this.text(i);
      for (var k = 0; k < toks.length; k++) if (t.indexOf(toks[k]) < 0) return false;
      return true;
    },
    build: function () {
      var toks = this.query.toLowerCase().split(/\s+/).filter(Boolean);
      var shown = new Uint8Array(N), sa = new Int32Array(N), cnt = new Int32Array(N), lastKid = new Int32Array(N).fill(-1);
      var rows = [], rootShown = 0, rootLast = -1;
      for (var i = 0; i < N; i++) {
        var p = P[i];
        sa[i] = p < 0 ? -1 : shown[p] ? p : sa[p];
        if (this.visible(i) && (!toks.length || this.matches(i, toks))) {
          shown[i] = 1; rows.push(i);
          if (sa[i] < 0) { rootShown++; rootLast = i; } else { cnt[sa[i]]++; lastKid[sa[i]] = i; }
        }
      }
      var indent = new Int32Array(N), branch = new Uint8Array(N);
      for (var r = 0; r < rows.length; r++) {
        var x = rows[r], a = sa[x];
        if (a < 0) { indent[x] = rootShown > 1 ? 1 : 0; branch[x] = rootShown > 1 ? (x === rootLast ? 2 : 1) : 0; }
        else { var fork = cnt[a] > 1; indent[x] = indent[a] + (fork ? 1 : 0); branch[x] = fork ? (lastKid[a] === x ? 2 : 1) : 0; }
      }
      this.rows = rows; this.indent = indent; this.branch = branch;
      space.style.height = rows.length * RH + 'px';
      status.textContent = rows.length + ' of ' + N + ' entries shown' + (toks.length ? ' matching “' + toks.join(' ') + '”' : '');
      this.paint(true);
    },
    refresh: function (scroll) {
      this.onPath = new Set(path);
      if (this.filter !== 'all' && this.filter !== 'labeled' && this.filter !== 'user') this.build(); else this.paint(true);
      if (scroll) this.reveal(sel.target >= 0 ? sel.target : sel.leaf);
    },
    reveal: function (i) {
      var r = this.rows.indexOf(i);
      if (r < 0) return;
      var top = r * RH;
      if (top < treeEl.scrollTop || top > treeEl.scrollTop + treeEl.clientHeight - RH) treeEl.scrollTop = Math.max(0, top - treeEl.clientHeight / 2);
      this.paint(true);
    },
    paint: function (force) {
      var first = Math.max(0, Math.floor(treeEl.scrollTop / RH) - 20);
      var last = Math.min(this.rows.length, first + Math.ceil(treeEl.clientHeight / RH) + 40);
      if (!force && first === this.first && last === this.last) return;
      this.first = first; this.last = last;
      var f = document.createDocumentFragment();
      for (var r = first; r < last; r++) f.appendChild(this.row(r));
      space.textContent = '';
      space.appendChild(f);
    },
    row: function (r) {
      var i = this.rows[r], e = E[i], m = msg(e), d = el('div', 'row');
      d.style.top = r * RH + 'px';
      d.style.paddingLeft = (4 + Math.min(this.indent[i], 30) * 12) + 'px';
      d.dataset.idx = i; d.dataset.id = e.id;
      d.setAttribute('role', 'treeitem');
      if (this.onPath.has(i)) d.classList.add('path');
      if (i === sel.target) d.classList.add('sel');
      if (this.indent[i] > 30) d.appendChild(el('span', 'br', '…' + this.indent[i] + ' '));
      if (this.branch[i]) d.appendChild(el('span', 'br', this.branch[i] === 2 ? '└ ' : '├ '));
      if (i === sel.leaf) d.appendChild(el('span', 'leafmark', '›'));
      if (labels[e.id]) d.appendChild(el('span', 'lbl', labels[e.id]));
      (cursorAt.get(e.id) || []).forEach(function (c) { d.appendChild(el('span', 'chip cur', '@' + c)); });
      var r0 = m ? str(m.role) : e.type, t;
      if (m) {
        t = textOf(m.content) || str(m.command) || str(m.toolName);
        if (!t) blocks(m.content).forEach(function (b) { if (b.type === 'toolCall') t = (t ? t + ', ' : '') + '[' + str(b.name) + ']'; });
      } else t = str(e.summary) || str(e.name) || str(e.label) || str(e.customType) || (e.type === 'model_change' ? str(e.modelId) : '');
      d.appendChild(el('span', 'role', r0 + ':'));
      d.appendChild(document.createTextNode(str(t).slice(0, 200).replace(/\s+/g, ' ')));
      d.title = e.id;
      return d;
    }
  };
  treeEl.addEventListener('scroll', function () { tree.paint(false); }, { passive: true });
  treeEl.addEventListener('click', function (ev) {
    var r = ev.target.closest('.row');
    if (!r) return;
    var i = +r.dataset.idx;
    select(pathIndex.has(i) ? sel.leaf : newestLeaf(i), i);
  });
  treeEl.addEventListener('keydown', function (ev) {
    var step = { ArrowDown: 1, ArrowUp: -1, PageDown: 20, PageUp: -20 }[ev.key];
    if (!step || !tree.rows.length) return;
    ev.preventDefault();
    var r = tree.rows.indexOf(sel.target >= 0 ? sel.target : sel.leaf);
    var i = tree.rows[Math.max(0, Math.min(tree.rows.length - 1, (r < 0 ? 0 : r + step)))];
    select(pathIndex.has(i) ? sel.leaf : newestLeaf(i), i);
  });
  document.getElementById('filters').addEventListener('click', function (ev) {
    var b = ev.target.closest('button');
    if (!b) return;
    document.querySelectorAll('#filters button').forEach(function (x) { x.classList.toggle('on', x === b); });
    tree.filter = b.dataset.filter;
    tree.build();
  });
  var searchTimer = 0;
  searchEl.addEventListener('input', function () {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(function () { tree.query = searchEl.value; tree.build(); }, 120);
  });
  searchEl.addEventListener('keydown', function (ev) {
    if (ev.key === 'Escape') { searchEl.value = ''; tree.query = ''; tree.build(); select(leafIdx(), -1); }
  });

  // ---- conversation clicks: more, jumps, branch selection, copy link ----
  conv.addEventListener('click', function (ev) {
    var b = ev.target.closest('button');
    if (!b) return;
    if (b.dataset.more) grow(b.dataset.more);
    else if (b.dataset.jump && byId.has(b.dataset.jump)) jumpTo(byId.get(b.dataset.jump));
    else if (b.dataset.select && byId.has(b.dataset.select)) { var i = byId.get(b.dataset.select); select(i, i); }
    else if (b.dataset.copy) {
      var url = location.href.split('#')[0] + '#leaf=' + encodeURIComponent(E[sel.leaf].id) + '&entry=' + encodeURIComponent(b.dataset.copy);
      history.replaceState(null, '', url);
      var done = function () { b.textContent = '✓ copied'; setTimeout(function () { b.textContent = 'link'; }, 1500); };
      if (navigator.clipboard && navigator.clipboard.writeText) navigator.clipboard.writeText(url).then(done, function () { b.textContent = 'link in address bar'; });
      else b.textContent = 'link in address bar';
    }
  });

  // ---- header ----
  function header() {
    var h = document.getElementById('head'), hd = D.header || {};
    var title = D.name || '';
    if (!title) for (var i = 0; i < N && !title; i++) if (role(E[i]) === 'user') title = textOf(msg(E[i]).content).slice(0, 120);
    h.appendChild(el('h1', '', title || 'Session ' + str(hd.id)));
    var dl = el('dl'), models = new Set(), lastTs = '';
    for (var k = 0; k < N; k++) {
      var m = msg(E[k]);
      if (m && m.role === 'assistant' && m.model) models.add(str(m.provider) + '/' + str(m.model));
      if (str(E[k].timestamp) > lastTs) lastTs = str(E[k].timestamp);
    }
    var u = (D.stats && D.stats.apiUsage) || {};
    var rows = [
      ['Session', str(hd.id)], ['File', str(D.file)], ['Folder', str(hd.cwd)],
      ['Model', Array.from(models).join(', ') || '—'],
      ['Started', fmtTime(hd.timestamp)], ['Last entry', lastTs ? fmtTime(lastTs) : '—'],
      ['Entries', num(N) + (D.options.branchOnly ? ' (this branch only)' : '') + (D.options.noTools ? ' (tool output left out)' : '')],
      ['Tokens', 'input ' + num(u.input) + ' · output ' + num(u.output) + ' · cache read ' + num(u.cacheRead) + ' · cache write ' + num(u.cacheWrite) + ' · total ' + num(u.totalTokens) + ' (' + num(u.requests) + ' requests)'],
      ['Cost', '$' + (Number(u.cost) || 0).toFixed(4) + (Array.isArray(u.byModel) && u.byModel.length > 1 ? ' (' + u.byModel.map(function (r) { return str(r && r.key) + ' $' + (Number(r && r.cost) || 0).toFixed(4); }).join(' · ') + ')' : '')]
    ];
    if (D.options.redacted) rows.push(['Redacted', 'secrets were masked']);
    rows.forEach(function (r) { if (r[1]) { dl.appendChild(el('dt', '', r[0])); dl.appendChild(el('dd', '', r[1])); } });
    h.appendChild(dl);
  }

  // ---- toolbar ----
  var root = document.documentElement;
  function setTheme(dark) {
    root.classList.toggle('dark', dark);
    try { localStorage.setItem('arbor-theme', dark ? 'dark' : 'light'); } catch (e) { /* storage may be off for files */ }
  }
  var saved = null;
  try { saved = localStorage.getItem('arbor-theme'); } catch (e) { /* ignore */ }
  setTheme(saved ? saved === 'dark' : !!(window.matchMedia && matchMedia('(prefers-color-scheme: dark)').matches));
  document.getElementById('t-theme').addEventListener('click', function () { setTheme(!root.classList.contains('dark')); });
  var thinkingHidden = false;
  function toggleThinking() { thinkingHidden = !thinkingHidden; conv.classList.toggle('hide-thinking', thinkingHidden); document.getElementById('t-thinking').classList.toggle('on', !thinkingHidden); }
  function toggleTools() {
    showTools = !showTools;
    document.getElementById('t-tools').classList.toggle('on', showTools);
    conv.querySelectorAll('.tool details').forEach(function (d) { if (showTools) d._fill(); d.open = showTools; });
  }
  document.getElementById('t-thinking').classList.add('on');
  document.getElementById('t-thinking').addEventListener('click', toggleThinking);
  document.getElementById('t-tools').addEventListener('click', toggleTools);
  document.getElementById('t-print').addEventListener('click', function () { window.print(); });
  window.addEventListener('beforeprint', function () { conv.querySelectorAll('details').forEach(function (d) { if (d._fill) d._fill(); d.open = true; }); });
  document.addEventListener('keydown', function (ev) {
    if (ev.target === searchEl || ev.ctrlKey || ev.metaKey || ev.altKey) return;
    if (ev.key === 't') toggleThinking(); else if (ev.key === 'o') toggleTools();
  });
  document.getElementById('t-jsonl').addEventListener('click', function () {
    var lines = [JSON.stringify(D.header)];
    for (var i = 0; i < N; i++) lines.push(JSON.stringify(E[i]));
    var blob = new Blob([lines.join('\n') + '\n'], { type: 'application/x-ndjson' });
    var a = document.createElement('a');
    a.href = URL.createObjectURL(blob);
    a.download = (str(D.file).replace(/\.[^.]*$/, '') || 'session') + '.jsonl';
    document.body.appendChild(a); a.click(); a.remove();
    setTimeout(function () { URL.revokeObjectURL(a.href); }, 10000);
  });

  // ---- deep links: #leaf=<id>&entry=<id>, or pi's ?leafId=&targetId= ----
  function leafIdx() { var l = D.leaf != null && byId.get(D.leaf); return l === undefined || l === false ? (N ? newestLeaf(roots[roots.length - 1]) : -1) : l; }
  function fromLocation() {
    var h = new URLSearchParams(location.hash.slice(1)), q = new URLSearchParams(location.search);
    var leaf = h.get('leaf') || q.get('leafId'), target = h.get('entry') || q.get('targetId');
    var li = leaf != null && byId.has(leaf) ? byId.get(leaf) : -1;
    var ti = target != null && byId.has(target) ? byId.get(target) : -1;
    if (li < 0 && ti >= 0) li = newestLeaf(ti);
    if (li >= 0 && ti >= 0 && pathTo(li).indexOf(ti) < 0) li = newestLeaf(ti);
    if (li < 0) li = leafIdx();
    select(li, ti, true);
  }
  window.addEventListener('hashchange', fromLocation);
  header();
  tree.build();
  fromLocation();
  document.body.dataset.ready = '1';
  if (window.performance && performance.mark) performance.mark('arbor-ready');
})();
