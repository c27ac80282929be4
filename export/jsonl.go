package export

import (
	"bufio"
	"io"

	"github.com/arborlog/arbor/session"
)

// JSONL writes the path to the leaf as a new linear pi session (SPEC §6.1, as
// 'arbor fork' makes one): a new id, parentSession naming o.Source, labels of
// the path's entries re-emitted after it, every entry on its main cursor. pi
// opening it builds the same context as the original does from the leaf.
// With o.Redact secrets are masked; the lines stay valid JSON.
func JSONL(w io.Writer, l *session.Log, o Options) error {
	e, err := leaf(l, o)
	if err != nil {
		return err
	}
	if e == nil {
		return ErrEmpty
	}
	var opts []session.Option
	if o.ID != "" {
		opts = append(opts, session.WithID(o.ID))
	}
	if o.Now != nil {
		opts = append(opts, session.WithTimestamp(session.FormatTime(o.Now())))
	}
	if o.Source != "" {
		opts = append(opts, session.WithParent(o.Source))
	}
	nl, err := l.Branched(e.ID, opts...)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	line := func(b []byte) {
		if o.Redact != nil {
			b, _ = o.Redact.JSON(b)
		}
		bw.Write(b)
		bw.WriteByte('\n')
	}
	line(nl.Header().Raw())
	for _, x := range nl.Entries() {
		line(x.Raw())
	}
	return bw.Flush()
}
