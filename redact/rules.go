package redact

import "strings"

// spec is one row of the rule table: what a secret looks like, the
// lowercase literals a line must hold for the pattern to be tried (nil:
// tried on the whole text, for secrets that span lines), and what keeps a
// match that only looks like a secret.
//
// The part replaced is the group named "secret" when the pattern has one,
// else what follows the group named "keep", else the whole match.
type spec struct {
	name    string
	pattern string
	hints   []string
	// around, when set, must accept the text before and after a hint for
	// it to count.
	around func(before, after string) bool
	// spare, when set, is given the name (group "name", or "") and the
	// secret and reports that it is not one (code, a reference, a path).
	spare func(name, value string) bool
}

// Words that end the name of a secret (PASSWORD, api_key, clientSecret,
// X-Auth-Token). "key" and "pass" alone are too common (a map's key, a test
// that passed) to count in a quoted or YAML name, so there they need a
// qualifier before them (api_key, DB_PASS); in NAME=value they count alone.
var (
	strongWords = []string{"password", "passwd", "passphrase", "pwd", "secret", "token", "apikey", "auth", "credential", "credentials"}
	weakWords   = []string{"key", "pass"}
)

const identChars = `A-Za-z0-9_.\-`

// secretName reports whether a name ends with one of the words: after a
// separator (or alone) in lower, UPPER or Title case, or camel-cased after a
// lower-case letter or digit. A word inside a longer one (tokenizer,
// keyboard, monkey, password_hash) does not end a name. weakAlone lets
// "key" and "pass" count with nothing before them (KEY=value).
func secretName(name string, weakAlone bool) bool {
	for _, w := range strongWords {
		if endsWithWord(name, w, true) {
			return !spareName(name)
		}
	}
	for _, w := range weakWords {
		if endsWithWord(name, w, weakAlone) {
			return !spareName(name)
		}
	}
	return false
}

func endsWithWord(name, w string, alone bool) bool {
	if len(name) < len(w) {
		return false
	}
	pre, suf := name[:len(name)-len(w)], name[len(name)-len(w):]
	title := strings.ToUpper(w[:1]) + w[1:]
	if suf != w && suf != strings.ToUpper(w) && suf != title {
		return false
	}
	if pre == "" {
		return alone
	}
	switch c := pre[len(pre)-1]; {
	case c == '_' || c == '.' || c == '-':
		return true
	case suf == title:
		return 'a' <= c && c <= 'z' || '0' <= c && c <= '9'
	}
	return false
}

// followsAssign reports whether after starts with = or : (after a closing
// quote, escaped or not, and blanks), not == (a comparison) and not := but
// before a quote (token := lexer.Next() is code, token := "x" a secret).
func followsAssign(_, after string) bool {
	i := 0
	for i < len(after) && (after[i] == '"' || after[i] == '\'' || after[i] == '\\') {
		i++
	}
	for i < len(after) && (after[i] == ' ' || after[i] == '\t') {
		i++
	}
	if i >= len(after) || after[i] != '=' && after[i] != ':' {
		return false
	}
	rest := after[i+1:]
	switch {
	case rest == "" || rest[0] != '=':
		return true
	case after[i] == '=': // ==
		return false
	}
	// := counts before a quote, escaped or not.
	rest = strings.TrimLeft(rest[1:], " \t")
	return rest != "" && strings.IndexByte("\"'`\\", rest[0]) >= 0
}

// followsTag reports a word that ends an XML element's name (<password>).
func followsTag(_, after string) bool {
	return after != "" && after[0] == '>'
}

// isFlag reports a word that ends a --flag followed by a blank (--password value).
func isFlag(before, after string) bool {
	word := before[strings.LastIndexAny(before, " \t\n")+1:]
	return strings.HasPrefix(word, "--") && after != "" && (after[0] == ' ' || after[0] == '\t')
}

// inNetrc reports a password word after a machine or login one (.netrc).
func inNetrc(before, after string) bool {
	low := strings.ToLower(before)
	return (strings.Contains(low, "machine") || strings.Contains(low, "login")) && after != "" && (after[0] == ' ' || after[0] == '\t')
}

const (
	// boundary: a name starts the line or follows a character no name holds.
	boundary = `(?:^|[^` + identChars + `])`
	// unquoted: a value up to white space, a quote, a shell separator.
	unquoted = `[^\s"'\x60;&|<>=][^\s"'\x60;&|<>]*`
	// quoted: the inside of a quoted value (an escaped quote ends it too, for
	// JSON inside a JSON string: {\"password\":\"x\"}).
	quoted = `(?:[^"'\\\n]|\\[^"'\n])+`
)

// defaultSpecs is the built-in rule table, in the order rules run: formats
// with a shape of their own first (their name is the better label), then
// URLs with credentials, then secrets known by the name they are given.
// The families follow those of gitleaks' rule list. It is made on first
// use, as the rules are compiled.
func defaultSpecs() []spec {
	// The words end a name, so a line is tried only where one is followed
	// by = or : (after a closing quote and blanks); "key points" is not.
	secretHints := append(append([]string(nil), strongWords...), weakWords...)
	return []spec{
		// Key blocks: PEM (RSA, EC, OPENSSH, PKCS#8, ENCRYPTED) and PGP, cut
		// to the end of the text when the END line is missing.
		{name: "private-key", pattern: `-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\z)`},

		{name: "authorization", pattern: `(?i)(?P<keep>\b(?:proxy-)?authorization\s*[:=]\s*(?:(?:bearer|basic|token|digest|bot|negotiate)\s+)?)[^\s"',]+`, hints: []string{"authorization"}},

		// Cloud keys.
		{name: "aws-access-key", pattern: `\b(?:AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|A3T[A-Z0-9])[0-9A-Z]{16}\b`, hints: []string{"akia", "asia", "agpa", "aida", "aroa", "aipa", "anpa", "anva", "a3t"}},
		{name: "google-api-key", pattern: `\bAIza[0-9A-Za-z_\-]{35}\b`, hints: []string{"aiza"}},
		{name: "azure-storage-key", pattern: `(?i)(?P<keep>\b(?:AccountKey|SharedAccessKey)\s*=\s*)[A-Za-z0-9+/]{20,}={0,2}`, hints: []string{"accountkey", "sharedaccesskey"}},
		{name: "azure-sas", pattern: `(?P<keep>[?&]sig=)[A-Za-z0-9%+/=]{16,}`, hints: []string{"sig="}},
		{name: "digitalocean-token", pattern: `\bdo[opr]_v1_[a-f0-9]{64}\b`, hints: []string{"dop_v1_", "doo_v1_", "dor_v1_"}},

		// Forges, registries and package indexes.
		{name: "github-token", pattern: `\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b`, hints: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"}},
		{name: "gitlab-token", pattern: `\bgl(?:pat|ptt|dt|rt|cbt|oas|soat|ft|imt|agent)-[A-Za-z0-9_\-]{20,}`, hints: []string{"glpat-", "glptt-", "gldt-", "glrt-", "glcbt-", "gloas-", "glsoat-", "glft-", "glimt-", "glagent-"}},
		{name: "npm-token", pattern: `\bnpm_[A-Za-z0-9]{36}\b`, hints: []string{"npm_"}},
		{name: "pypi-token", pattern: `\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_\-]{50,}`, hints: []string{"pypi-ageichlwas5vcmc"}},
		{name: "huggingface-token", pattern: `\b(?:hf_|api_org_)[A-Za-z0-9]{34,}\b`, hints: []string{"hf_", "api_org_"}},

		// Chat, mail, payments and model providers.
		{name: "slack-token", pattern: `\b(?:xox[abposre]-[A-Za-z0-9-]{10,}|xapp-[0-9]-[A-Za-z0-9-]{10,})`, hints: []string{"xox", "xapp-"}},
		{name: "slack-webhook", pattern: `(?i)(?P<keep>\bhooks\.slack\.com/(?:services|workflows|triggers)/)[A-Za-z0-9_/+\-]{20,}`, hints: []string{"hooks.slack.com"}},
		{name: "discord-token", pattern: `\b[MNO][A-Za-z0-9_\-]{23,25}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,38}\b`, hints: []string{"discord", "bot "}},
		{name: "discord-webhook", pattern: `(?i)(?P<keep>\bdiscord(?:app)?\.com/api/webhooks/[0-9]+/)[A-Za-z0-9_\-]{30,}`, hints: []string{"discord"}},
		{name: "telegram-bot-token", pattern: `[0-9]{8,10}:AA[A-Za-z0-9_\-]{33}\b`, hints: []string{":aa"}},
		{name: "twilio-key", pattern: `SK[0-9a-fA-F]{32}\b`, hints: []string{"sk"}},
		{name: "sendgrid-key", pattern: `\bSG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}\b`, hints: []string{"sg."}},
		{name: "mailgun-key", pattern: `\bkey-[0-9a-f]{32}\b`, hints: []string{"key-"}},
		{name: "stripe-key", pattern: `\b(?:sk|rk)_(?:live|test|prod)_[A-Za-z0-9]{10,99}\b|\bwhsec_[A-Za-z0-9]{24,}`, hints: []string{"sk_live_", "sk_test_", "sk_prod_", "rk_live_", "rk_test_", "rk_prod_", "whsec_"}},
		{name: "shopify-token", pattern: `\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b`, hints: []string{"shpat_", "shpca_", "shppa_", "shpss_"}},
		{name: "api-key", pattern: `\bsk-(?:ant-|proj-)?[A-Za-z0-9_\-]{20,}`, hints: []string{"sk-"}},
		{name: "vault-token", pattern: `\bhv[sbr]\.[A-Za-z0-9_\-]{24,}`, hints: []string{"hvs.", "hvb.", "hvr."}},
		{name: "databricks-token", pattern: `\bdapi[a-f0-9]{32}(?:-[0-9])?\b`, hints: []string{"dapi"}},
		{name: "age-secret-key", pattern: `\bAGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}\b`, hints: []string{"age-secret-key-1"}},
		{name: "jwt", pattern: `\beyJ[A-Za-z0-9_\-]{5,}\.eyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]*`, hints: []string{"eyj"}},

		// Credentials in URLs: scheme://user:password@host, for any scheme
		// (https, postgres, mysql, mongodb+srv, redis, amqp, …); the user may be
		// empty (redis://:pw@host); the password ends at the last @ before the
		// path.
		{name: "url-credentials", pattern: `(?P<keep>\b[A-Za-z][A-Za-z0-9+.\-]{0,30}://[^\s:/@?#"'<>\x60]*:)(?P<secret>[^\s/?#"'<>\x60]+)@`, hints: []string{"://"}},

		// Passwords given to commands on their command lines.
		{name: "cli-password", pattern: `(?P<keep>(?:^|\s)(?:-u|--user)(?:[ \t]+|=)["']?[^\s:"'@]*:)(?P<secret>[^\s"'@]+)["']?(?:\s|$)`, hints: []string{"curl", "--user"}},
		{name: "cli-password", pattern: `(?P<keep>\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mariadb|mariadb-dump)\b[^\n]*?[ \t]-p["']?)[^\s"']+`, hints: []string{"mysql", "mariadb"}},
		{name: "cli-password", pattern: `(?P<keep>\bsshpass\b[^\n]*?[ \t]-p[ \t]*["']?)[^\s"'\-][^\s"']*`, hints: []string{"sshpass"}},
		{name: "cli-password", pattern: `(?P<keep>\b(?:docker|podman|nerdctl)\b[^\n]*?\blogin\b[^\n]*?[ \t]-p[ \t]+["']?)[^\s"'\-][^\s"']*`, hints: []string{"docker", "podman", "nerdctl"}},
		{name: "cli-password", pattern: `(?P<keep>[ \t]-pass(?:in|out)?[ \t]+["']?pass:)[^\s"']+`, hints: []string{"pass:"}},
		{name: "cli-password", pattern: `(?P<keep>\bredis-cli\b[^\n]*?[ \t](?:-a|--pass)[ \t]+["']?)[^\s"'\-][^\s"']*`, hints: []string{"redis-cli"}},
		{name: "cli-password", pattern: `(?P<keep>\b(?:machine|login)[ \t]+\S+[ \t]+(?:login[ \t]+\S+[ \t]+)?password[ \t]+)\S+`, hints: []string{"password"}, around: inNetrc},
		{name: "cli-password", pattern: `(?P<keep>(?:^|\s)--(?P<name>[` + identChars + `]+)[ \t]+["']?)(?P<secret>[^\s"'\-][^\s"']*)`, hints: secretHints, around: isFlag, spare: spareValue(false)},

		// Secrets known by their name. Headers first (X-Api-Key: v, anywhere
		// on a line), then "name": "value" with the name quoted or not (JSON,
		// YAML, code), then NAME=value anywhere (env, flags, query strings,
		// connection strings), then name: value or name = value at the start
		// of a line (YAML, INI, .netrc-like config).
		{name: "secret-header", pattern: `(?P<keep>` + boundary + `(?P<name>[Xx]-[A-Za-z0-9\-]*|(?i:private-token|api-?key|access-token|auth-token))[ \t]*:[ \t]*)(?P<secret>` + unquoted + `)`,
			hints: []string{"x-", "private-token", "api-key", "apikey", "access-token", "auth-token"}, spare: spareHeader},
		{name: "secret-json", pattern: `(?P<keep>` + boundary + `\\?["']?(?P<name>[` + identChars + `]+)\\?["']?[ \t]*(?::=|=>|[:=])[ \t]*\\?["'])(?P<secret>` + quoted + `)`,
			hints: secretHints, around: followsAssign, spare: spareQuoted(false)},
		{name: "secret-xml", pattern: `(?P<keep><(?P<name>[A-Za-z0-9_.:\-]+)>)(?P<secret>[^<\s][^<]*)</`, hints: secretHints, around: followsTag, spare: spareQuoted(false)},
		{name: "secret-assignment", pattern: `(?P<keep>` + boundary + `(?P<name>[` + identChars + `]+)=)(?P<secret>` + unquoted + `)`,
			hints: secretHints, around: followsAssign, spare: spareValue(true)},
		{name: "secret-assignment", pattern: `(?P<keep>(?:^[ \t]*(?:export[ \t]+|-[ \t]+|[<>][ \t]+)?|["'][ \t]*)(?P<name>[` + identChars + `]+)[ \t]*[:=][ \t]*)(?P<secret>` + unquoted + `)`,
			hints: secretHints, around: followsAssign, spare: spareValue(false)},
		{name: "secret-assignment", pattern: `(?P<keep>^[ \t]*(?:export[ \t]+)?(?P<name>[` + identChars + `]+)[ \t]*=[ \t]*)(?P<secret>` + unquoted + `)`,
			hints: secretHints, around: followsAssign, spare: spareValue(true)},
	}
}

// Names that end with a secret's word but are not secrets.
var notSecretNames = []string{
	"pwd", "oldpwd", // the shell's working folders
}

// notSecretQualifiers: a key or token so qualified is an index or a cursor.
var notSecretQualifiers = []string{"public", "primary", "foreign", "sort", "partition", "range", "cache", "lookup", "map", "dict",
	"index", "row", "column", "field", "group", "object", "hot", "short", "shortcut", "next", "page", "continuation", "cancel",
	"cancellation", "max", "num", "sync", "idempotency"}

// keyword reports a lowercase value that is a type or a constant, not a secret.
func keyword(v string) bool {
	switch v {
	case "true", "false", "yes", "no", "on", "off", "null", "nil", "none", "undefined", "required", "optional", "string", "str", "bool", "int":
		return true
	}
	return false
}

// codeLike reports a value that is an expression: a dotted path starting
// lower-case (req.Password, settings.SECRET_KEY), an identifier closing a
// call or a list (pw), tok,), or a call or index (getpass(), os.environ[…]).
func codeLike(v string) bool {
	i := 0
	for i < len(v) && (isWord(v[i]) || v[i] == '.') {
		i++
	}
	ident, rest := v[:i], v[i:]
	if ident == "" || '0' <= ident[0] && ident[0] <= '9' {
		return false
	}
	switch {
	case rest != "" && (rest[0] == '(' || rest[0] == '['):
		return true
	case rest != "" && strings.Trim(rest, ",)") == "":
		return !strings.Contains(ident, ".") || 'a' <= ident[0] && ident[0] <= 'z'
	case rest == "" || rest == ",":
		return strings.Contains(ident, ".") && ('a' <= ident[0] && ident[0] <= 'z' || ident[0] == '_') && !strings.HasSuffix(ident, ".")
	}
	return false
}

func isWord(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
}

// spareName reports a name that ends with a secret's word but names none:
// $PWD, and keys and tokens that are indexes or cursors (sort_key,
// nextPageToken, CancellationToken).
func spareName(name string) bool {
	low := strings.ToLower(name)
	for _, n := range notSecretNames {
		if low == n {
			return true
		}
	}
	var q string
	switch {
	case strings.HasSuffix(low, "key"):
		q = name[:len(name)-3]
	case strings.HasSuffix(low, "token"):
		q = name[:len(name)-5]
	default:
		return false
	}
	q = strings.TrimRight(q, "_.-")
	q = q[strings.LastIndexAny(q, "_.-")+1:]
	for j := len(q) - 1; j > 0; j-- {
		if 'A' <= q[j] && q[j] <= 'Z' && 'a' <= q[j-1] && q[j-1] <= 'z' {
			q = q[j:]
			break
		}
	}
	q = strings.ToLower(q)
	for _, n := range notSecretQualifiers {
		if q == n {
			return true
		}
	}
	return false
}

// placeholder reports a value that stands for a secret without being one:
// a template or variable reference, a format verb, <your-token>, ****.
func placeholder(v string) bool {
	switch {
	case strings.HasPrefix(v, "${"), strings.HasPrefix(v, "{{"), strings.HasPrefix(v, "$("),
		v == "%s" || v == "%v" || v == "%q" || v == "{}" || v == "?",
		strings.HasPrefix(v, "<") && strings.HasSuffix(v, ">"),
		strings.Trim(v, "*") == "", strings.TrimLeft(strings.ToLower(v), "x") == "":
		return true
	}
	return false
}

// spareQuoted keeps a quoted value whose name is no secret's, or that is a
// placeholder.
func spareQuoted(weakAlone bool) func(name, v string) bool {
	return func(name, v string) bool {
		return !secretName(name, weakAlone) || placeholder(v)
	}
}

// spareValue keeps an unquoted value whose name is no secret's, or that
// reads as code, a reference, a path or a keyword rather than a secret:
// token := lexer.Next(), PASSWORD=$DB_PASSWORD, ssl_key: /etc/ssl/x.key,
// Password: req.Password, f(password=password).
func spareValue(weakAlone bool) func(name, v string) bool {
	return func(name, v string) bool {
		return !secretName(name, weakAlone) || notSecretValue(name, v)
	}
}

func notSecretValue(name, v string) bool {
	low := strings.ToLower(strings.TrimRight(v, ",;)"))
	last := strings.ToLower(name)
	if i := strings.LastIndexAny(last, "_.-"); i >= 0 {
		last = last[i+1:]
	}
	switch {
	case placeholder(v), keyword(low), low == strings.ToLower(name), low == last,
		strings.HasPrefix(v, "$"), strings.HasPrefix(v, "%"), strings.HasPrefix(v, ":") && len(v) > 1,
		strings.HasPrefix(v, "/"), strings.HasPrefix(v, "./"), strings.HasPrefix(v, "../"), strings.HasPrefix(v, "~/"),
		codeLike(v), strings.Contains(v, "://"):
		return true
	}
	return false
}

// spareHeader keeps a header whose name holds no secret word (X-Request-Id).
func spareHeader(name, v string) bool {
	low := strings.ToLower(name)
	for _, w := range []string{"key", "token", "secret", "auth", "password", "signature", "session"} {
		if strings.HasSuffix(low, w) {
			return placeholder(v) || notSecretValue(name, v)
		}
	}
	return true
}
