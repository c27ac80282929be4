package pgstore

import (
	"net/url"
	"regexp"
	"strings"
)

// Connection strings carry passwords, and the tables, errors and messages
// pgstore writes are read by others (every role of the database, logs, a
// refused writer's terminal). So every connection string pgstore names goes
// through Redact, and text that may quote one through redactText: nothing
// else masks passwords.

const mask = "xxxxx"

var (
	// kvPassword is a password in a key=value connection string
	// (password=..., PGPASSWORD=..., sslpassword='...'), quoted or not.
	kvPassword = regexp.MustCompile(`(?i)(password\s*=\s*)(?:'(?:[^'\\]|\\.)*'?|\S*)`)
	// queryPassword is a password in a URL's query (?password=...).
	queryPassword = regexp.MustCompile(`(?i)([?&]password=)[^&#]*`)
	// secretText finds, in any text, a URL or a key=value password.
	secretText = regexp.MustCompile(`(?i)postgres(?:ql)?://[^\s"'` + "`" + `]+|password\s*=\s*(?:'(?:[^'\\]|\\.)*'?|\S*)`)
)

// Redact returns the connection string s (a postgres:// URL or key=value
// pairs) with its password masked, for messages and records. Everything else
// is kept as the user wrote it.
func Redact(s string) string {
	if !IsURL(s) {
		return kvPassword.ReplaceAllString(s, "${1}"+mask)
	}
	scheme, rest, _ := strings.Cut(s, "://")
	if ambiguousURL(s) {
		// A password holding '/', '?' or '#' unescaped: the URL's parts are
		// not what they seem, and the password may be anywhere before the
		// last '@'. Mask all of that but the user name.
		at := strings.LastIndex(rest, "@")
		user, _, hasPassword := strings.Cut(rest[:at], ":")
		if hasPassword {
			rest = user + ":" + mask + rest[at:]
		}
		return scheme + "://" + queryPassword.ReplaceAllString(rest, "${1}"+mask)
	}
	// Well formed: the user information ends at the last '@' before the
	// first '/', '?' or '#', and a password cannot hold any of those.
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	if at := strings.LastIndex(rest[:end], "@"); at >= 0 {
		if user, _, ok := strings.Cut(rest[:at], ":"); ok {
			rest = user + ":" + mask + rest[at:]
		}
	}
	return scheme + "://" + queryPassword.ReplaceAllString(rest, "${1}"+mask)
}

// ambiguousURL reports whether the URL s may hold a password written
// without percent-encoding: it does not parse and has an '@', or it has an
// '@' after its host part (in its path, query or fragment) while that part
// has a ':'. Both may also be a host's port and an '@' in a parameter:
// masking too much there only hides part of a name.
func ambiguousURL(s string) bool {
	_, rest, _ := strings.Cut(s, "://")
	if _, err := url.Parse(s); err != nil {
		return strings.Contains(rest, "@")
	}
	end := strings.IndexAny(rest, "/?#")
	return end >= 0 && strings.Contains(rest[end:], "@") && strings.Contains(rest[:end], ":")
}

// atInPath reports whether the URL s has an '@' in its path: a password with
// an unescaped '/', which would be taken for the database's name.
func atInPath(s string) bool {
	_, rest, _ := strings.Cut(s, "://")
	end := strings.IndexAny(rest, "/?#")
	if end < 0 || rest[end] != '/' {
		return false
	}
	path, _, _ := strings.Cut(rest[end:], "?")
	path, _, _ = strings.Cut(path, "#")
	return strings.Contains(path, "@")
}

// redactText masks every connection string's password in text (an error
// from the driver or the server, a command line).
func redactText(text string) string {
	return secretText.ReplaceAllStringFunc(text, func(m string) string {
		if scheme, rest, ok := strings.Cut(m, "://"); ok {
			return Redact(strings.ToLower(scheme) + "://" + rest)
		}
		return kvPassword.ReplaceAllString(m, "${1}"+mask)
	})
}
