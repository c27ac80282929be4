// Package shell writes words a POSIX shell reads back exactly: the command
// lines arbor prints as hints for a user to paste, and the file names it puts
// into a command it runs through sh. It is the one place that knows sh's
// quoting.
package shell

import "strings"

// Quote returns s as one word for sh: as it is when sh would read it so
// (letters, digits and @%+:,./_-; not '=', which zsh expands at the start of
// a word), otherwise in single quotes, where a quote of s closes the quoted
// part, is escaped with a backslash and opens the next. Quoting does not stop
// a word that begins with '-' from being read as a flag: see Args.
func Quote(s string) string {
	if s != "" && strings.IndexFunc(s, unsafe) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func unsafe(r rune) bool {
	switch {
	case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', '0' <= r && r <= '9':
		return false
	}
	return !strings.ContainsRune("@%+:,./_-", r)
}

// Args returns a command line that runs command with the operands given:
// each quoted, after "--" when one begins with '-', so an id or a name such
// as "--purge" reaches the command as an operand, not as a flag. command is
// arbor's own text (a program and its subcommand) and is not quoted.
func Args(command string, operands ...string) string {
	var b strings.Builder
	b.WriteString(command)
	for _, o := range operands {
		if strings.HasPrefix(o, "-") {
			b.WriteString(" --")
			break
		}
	}
	for _, o := range operands {
		b.WriteByte(' ')
		b.WriteString(Quote(o))
	}
	return b.String()
}
