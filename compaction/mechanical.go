package compaction

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/arborlog/arbor/internal/jsonscan"
	"github.com/arborlog/arbor/internal/toolargs"
	"github.com/arborlog/arbor/session"
)

// Mechanical is the deterministic, offline Summarizer (rho's mechanical
// compaction strategy): it needs no model and gives the same summary for the
// same messages. A summary holds
//
//   - the original request (the first user text) and the current one (the last);
//   - the tool activity, in segments that start at each user message and at each
//     change of phase (exploration, execution, verification, conclusion);
//   - key findings: the start of each tool result, errors marked;
//   - the last reply;
//
// and is rolled forward: given a previous mechanical summary it keeps that
// summary's original request, activity and findings in front of the new ones;
// a previous summary of another kind is kept as "Earlier summary". Sizes are
// capped (MaxSegments, MaxFindings, and the characters of each part) so that a
// summary never grows without bound however often a session is compacted.
type Mechanical struct{}

// Caps of a mechanical summary.
const (
	MaxSegments     = 40   // newest activity segments kept
	MaxFindings     = 20   // newest findings kept
	maxItems        = 12   // tool calls listed per segment
	maxRequestChars = 1000 // per request
	maxFindingChars = 150  // per finding (rho's cut)
	maxReplyChars   = 600
	maxEarlierChars = 4000 // a previous summary that is not mechanical
)

// Phases of tool activity.
const (
	phaseExploration  = "exploration"
	phaseExecution    = "execution"
	phaseVerification = "verification"
	phaseConclusion   = "conclusion"
	phaseOther        = "other"
)

// trimSegments and trimFindings are how many segments and findings Summarize
// holds before it lets the older ones go (a test sets them to 1 and to the
// largest int: the summaries are the same).
var (
	trimSegments = 4 * MaxSegments
	trimFindings = 4 * MaxFindings
)

type segment struct {
	phase string
	items []string
}

// Summarize writes the summary. It never fails and never returns "".
func (Mechanical) Summarize(_ context.Context, r Request) (string, error) {
	var prev prior
	if r.PreviousSummary != nil {
		prev = parsePrior(*r.PreviousSummary)
	}
	var (
		original, current, lastReply string
		segs                         []segment
		findings                     []finding
		earlier                      []string
		callLabel                    = map[string]string{}
		phase                        string
		edited                       bool
	)
	// Only the newest MaxSegments segments with items and the newest
	// MaxFindings findings are shown: older ones are let go as the messages
	// are read (a million messages are hundreds of thousands of each), and
	// the segments counted.
	dropped := 0
	newSegment := func(p string) {
		phase = p
		if len(segs) >= trimSegments {
			// Every segment is complete: the next is about to start.
			kept := segs[:0]
			shown := 0
			for _, sg := range segs {
				if len(sg.items) > 0 {
					shown++
				}
			}
			for _, sg := range segs {
				if len(sg.items) == 0 {
					continue
				}
				if shown > MaxSegments {
					shown--
					dropped++
					continue
				}
				kept = append(kept, sg)
			}
			clear(segs[len(kept):])
			segs = kept
		}
		segs = append(segs, segment{phase: p})
	}
	addFinding := func(f finding) {
		if len(findings) >= trimFindings && len(findings) > MaxFindings {
			n := copy(findings, findings[len(findings)-MaxFindings:])
			clear(findings[n:])
			findings = findings[:n]
		}
		findings = append(findings, f)
	}
	eachFields(r.Messages, func(f *fields) {
		switch f.Role {
		case session.RoleUser, session.RoleBashExecution, session.RoleCustom:
			text := userText(*f)
			if f.Role == session.RoleUser && strings.TrimSpace(text) != "" {
				if original == "" {
					original = text
				}
				current = text
			}
			newSegment("")
			if f.Role == session.RoleBashExecution {
				p := bashPhase(f.Command, edited)
				newSegment(p)
				segs[len(segs)-1].items = append(segs[len(segs)-1].items, "user ran "+quoteCmd(f.Command))
				if strings.TrimSpace(f.Output) != "" {
					addFinding(finding{label: quoteCmd(f.Command), text: f.Output})
				}
			}
		case session.RoleAssistant:
			var text []string
			called := false
			for _, b := range f.Content.Blocks {
				switch b.Type {
				case "text":
					text = append(text, b.Text)
				case "toolCall":
					called = true
					label := callSummary(b.Name, b.Arguments)
					callLabel[b.ID] = label
					p := toolPhase(b.Name, b.Arguments, edited, phase)
					if b.Name == "edit" || b.Name == "write" || edits(b.Name) {
						edited = true
					}
					if p != phase || len(segs) == 0 {
						newSegment(p)
					}
					segs[len(segs)-1].items = append(segs[len(segs)-1].items, label)
				}
			}
			if t := strings.TrimSpace(strings.Join(text, "\n")); t != "" {
				lastReply = t
				if !called && phase != phaseConclusion {
					newSegment(phaseConclusion)
					segs[len(segs)-1].items = append(segs[len(segs)-1].items, "replied: "+clipLine(t, maxFindingChars))
				}
			}
		case session.RoleToolResult:
			label := callLabel[f.ToolCallID]
			if label == "" {
				label = f.ToolName
			}
			if f.IsError {
				label += " (error)"
			}
			addFinding(finding{label: label, text: f.Content.Text(" ")})
		case session.RoleBranchSummary, session.RoleCompactionSummary:
			earlier = append(earlier, strings.TrimPrefix(stripFileLists(f.Summary), BranchSummaryPreamble))
		}
	})

	if prev.original != "" {
		original = prev.original
	}
	if prev.earlier != "" {
		earlier = append([]string{prev.earlier}, earlier...)
	}
	var lines []string
	truncated := prev.truncated
	for _, s := range segs {
		if len(s.items) == 0 {
			continue
		}
		if s.phase == "" {
			s.phase = phaseOther
		}
		items := s.items
		if len(items) > maxItems {
			items = append(items[:maxItems:maxItems], fmt.Sprintf("+%d more", len(s.items)-maxItems))
		}
		lines = append(lines, "- ["+s.phase+"] "+strings.Join(items, "; "))
	}
	lines = append(prev.activity, lines...)
	truncated += dropped
	if over := len(lines) - MaxSegments; over > 0 {
		truncated += over
		lines = lines[over:]
	}
	shown := prev.findings
	for _, f := range findings[max(0, len(findings)-MaxFindings):] {
		shown = append(shown, f.String())
	}
	if over := len(shown) - MaxFindings; over > 0 {
		shown = shown[over:]
	}

	var b strings.Builder
	section := func(title, body string) {
		if body == "" {
			return
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString("## " + title + "\n" + body)
	}
	section(titleOriginal, clip(original, maxRequestChars))
	if current != "" && current != original {
		section("Current request", clip(current, maxRequestChars))
	}
	if truncated > 0 {
		lines = append([]string{fmt.Sprintf("- (%d older phase segments truncated)", truncated)}, lines...)
	}
	section(titleActivity, strings.Join(lines, "\n"))
	section(titleFindings, strings.Join(shown, "\n"))
	section("Latest reply", clip(lastReply, maxReplyChars))
	if len(earlier) > 0 {
		section(titleEarlier, clip(strings.Join(earlier, "\n\n"), maxEarlierChars))
	}
	if b.Len() == 0 {
		return "No prior history.", nil
	}
	return b.String(), nil
}

// finding is one line of the key findings, written only if it is shown (a
// million tool results make a few dozen lines): what ran (a call's label, a
// command) and the start of its output.
type finding struct{ label, text string }

func (f finding) String() string { return "- " + f.label + ": " + clipLine(f.text, maxFindingChars) }

const (
	titleOriginal = "Original request"
	titleActivity = "Activity"
	titleFindings = "Key findings"
	titleEarlier  = "Earlier summary"
)

// prior is what a new summary inherits from the previous one.
type prior struct {
	original  string
	activity  []string
	findings  []string
	truncated int
	earlier   string // a previous summary that is not mechanical, whole
}

var truncatedRE = regexp.MustCompile(`^- \((\d+) older phase segments truncated\)$`)

// parsePrior reads a previous summary back. One that Mechanical wrote is split
// into its sections; any other is kept whole as the earlier summary.
func parsePrior(s string) prior {
	s = stripFileLists(s)
	// A split-turn summary appends the turn's context after a rule; only the history part rolls forward.
	if i := strings.Index(s, "\n\n---\n\n**Turn Context (split turn):**"); i >= 0 {
		s = s[:i]
	}
	if !strings.HasPrefix(s, "## "+titleOriginal+"\n") && !strings.HasPrefix(s, "## "+titleActivity+"\n") {
		if strings.TrimSpace(s) == "" || s == "No prior history." {
			return prior{}
		}
		return prior{earlier: s}
	}
	var p prior
	for _, sec := range strings.Split("\n\n"+s, "\n\n## ") {
		title, body, _ := strings.Cut(sec, "\n")
		switch title {
		case titleOriginal:
			p.original = body
		case titleActivity:
			for _, l := range strings.Split(body, "\n") {
				if m := truncatedRE.FindStringSubmatch(l); m != nil {
					p.truncated, _ = strconv.Atoi(m[1])
				} else if strings.HasPrefix(l, "- ") {
					p.activity = append(p.activity, l)
				}
			}
		case titleFindings:
			for _, l := range strings.Split(body, "\n") {
				if strings.HasPrefix(l, "- ") {
					p.findings = append(p.findings, l)
				}
			}
		case titleEarlier:
			p.earlier = body
		}
	}
	return p
}

// stripFileLists removes the <read-files> and <modified-files> lists that end a
// stored summary; they are rebuilt from the entry's details.
func stripFileLists(s string) string {
	for {
		t := strings.TrimRight(s, "\n")
		var open string
		switch {
		case strings.HasSuffix(t, "\n</modified-files>"):
			open = "\n\n<modified-files>\n"
		case strings.HasSuffix(t, "\n</read-files>"):
			open = "\n\n<read-files>\n"
		default:
			return s
		}
		i := strings.LastIndex(t, open)
		if i < 0 {
			return s
		}
		s = t[:i]
	}
}

func userText(f fields) string {
	switch f.Role {
	case session.RoleBashExecution:
		return ""
	}
	if f.Content.IsString {
		return f.Content.String
	}
	return f.Content.Text("\n")
}

// toolPhase classifies a tool call (rho's classify_tool_phase, with pi's tool
// names): reading is exploration, editing and commands are execution, tests
// and builds verify once something was edited. Exploration never moves the
// phase back from execution or verification.
func toolPhase(name string, args []byte, edited bool, cur string) string {
	var p string
	switch name {
	case "read", "ls", "grep", "find", "glob":
		p = phaseExploration
	case "edit", "write":
		p = phaseExecution
	case "bash":
		a, ok := scanToolArgs(args)
		if !ok {
			var c struct {
				Command string `json:"command"`
			}
			_ = jsonUnmarshal(args, &c)
			a.Command = c.Command
		}
		p = bashPhase(a.Command, edited)
	default:
		if p = foreignPhase(name, args, edited); p != "" {
			break
		}
		if cur == "" || cur == phaseConclusion {
			return phaseOther
		}
		return cur
	}
	if p == phaseExploration && (cur == phaseExecution || cur == phaseVerification) {
		return cur
	}
	return p
}

// foreignPhase is toolPhase of another agent's tool (Claude Code's "Read",
// Codex's "shell"), by its kind in toolargs' table; "" for a tool the table
// does not know or whose kind has no phase.
func foreignPhase(name string, args []byte, edited bool) string {
	shape, ok := toolargs.Lookup(name)
	if !ok || toolargs.Pi(name) {
		return ""
	}
	switch shape.Kind {
	case toolargs.Read, toolargs.Ls, toolargs.Grep, toolargs.Find:
		return phaseExploration
	case toolargs.Edit, toolargs.Write, toolargs.Patch:
		return phaseExecution
	case toolargs.Bash:
		return bashPhase(shape.Of(args).Command, edited)
	}
	return ""
}

// edits reports another agent's tool that changes files, as pi's edit and
// write do.
func edits(name string) bool {
	shape, ok := toolargs.Lookup(name)
	return ok && !toolargs.Pi(name) && (shape.Kind == toolargs.Edit || shape.Kind == toolargs.Write || shape.Kind == toolargs.Patch)
}

var checkRE = regexp.MustCompile(`\b(test|tests|check|vet|lint|build|pytest|jest|vitest|cargo (test|check|clippy)|go (test|vet|build)|make)\b`)

func bashPhase(cmd string, edited bool) string {
	if checkRE.MatchString(cmd) {
		if edited {
			return phaseVerification
		}
		return phaseExploration
	}
	return phaseExecution
}

// callSummary names a tool call briefly: its path or command, else its arguments.
func callSummary(name string, args []byte) string {
	if shape, ok := toolargs.Lookup(name); ok && !toolargs.Pi(name) {
		switch a := shape.Of(args); {
		case a.Command != "":
			return name + " " + quoteCmd(a.Command)
		case a.Summary() != "":
			return name + " " + clip(a.Summary(), 80)
		}
	}
	a, ok := scanToolArgs(args)
	if !ok {
		_ = jsonUnmarshal(args, &a)
	}
	switch {
	case a.Command != "":
		return name + " " + quoteCmd(a.Command)
	case a.Path != "" && a.Pattern != "":
		return name + " " + strconv.Quote(clip(a.Pattern, 60)) + " in " + a.Path
	case a.Path != "":
		return name + " " + a.Path
	}
	s, _ := jsStringify(args)
	if s == "{}" || s == "" {
		return name
	}
	return name + " " + clip(s, 80)
}

// toolArgs are the arguments a tool call is named by.
type toolArgs struct {
	Path    string `json:"path"`
	Command string `json:"command"`
	Pattern string `json:"pattern"`
}

// scanToolArgs reads a tool call's arguments in one walk, as decoding them
// into toolArgs, or into a struct of some of its fields, does; ok is false
// unless they are an object (as written, valid JSON) whose path, command and
// pattern are each absent or a string without escapes, given once, and the
// caller then decodes them. A million tool calls are not decoded for their
// names and file operations.
func scanToolArgs(args []byte) (toolArgs, bool) {
	var a toolArgs
	if len(args) == 0 || args[0] != '{' {
		return a, false
	}
	var seen jsonscan.Seen
	ok := jsonscan.Members(args, func(name, v []byte) bool {
		var dst *string
		var bit uint32
		switch string(name) {
		case "path":
			dst, bit = &a.Path, 1
		case "command":
			dst, bit = &a.Command, 2
		case "pattern":
			dst, bit = &a.Pattern, 4
		default:
			return true
		}
		var ok bool
		*dst, ok = jsonscan.Plain(v)
		return ok && seen.First(bit)
	})
	return a, ok
}

func quoteCmd(cmd string) string { return "`" + clipLine(cmd, 80) + "`" }

// clip cuts s, trimmed, to n characters (runes), marking the cut. Only the
// part kept is converted: a message of megabytes costs no copy of itself.
func clip(s string, n int) string {
	s = strings.TrimSpace(s)
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	end, runes := 0, 0
	for end < len(s) && runes < n {
		_, size := utf8.DecodeRuneInString(s[end:])
		end += size
		runes++
	}
	// Through []rune, as a whole-string cut writes it: a byte that is not
	// UTF-8 becomes U+FFFD in the part kept.
	return string([]rune(s[:end])) + "…"
}

// clipLine is clip(strings.Join(strings.Fields(s), " "), n) without building
// the whole line: runs of white space become one space, and only the first n
// characters are kept.
func clipLine(s string, n int) string {
	if isLine(s, n) {
		return s // most tool output and replies of a long session: no copy
	}
	var b strings.Builder
	runes := 0
	for f := range strings.FieldsSeq(s) {
		if runes > 0 {
			if runes == n {
				return string([]rune(b.String())) + "…"
			}
			b.WriteByte(' ')
			runes++
		}
		for i := 0; i < len(f); runes++ {
			if runes == n {
				return string([]rune(b.String())) + "…"
			}
			_, size := utf8.DecodeRuneInString(f[i:])
			b.WriteString(f[i : i+size])
			i += size
		}
	}
	return b.String()
}

// isLine reports whether s is its own clipLine: ASCII, at most n characters,
// words separated by single spaces and none at either end.
func isLine(s string, n int) bool {
	if s == "" {
		return true
	}
	if len(s) > n || s[0] == ' ' || s[len(s)-1] == ' ' {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= utf8.RuneSelf, c < ' ' && (c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'):
			return false
		case c == ' ' && s[i+1] == ' ':
			return false
		}
	}
	return true
}
