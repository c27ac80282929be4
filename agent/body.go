package agent

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"

	"github.com/go-json-experiment/json/jsontext"
)

// A request's body is written a message at a time, so that a request of a
// million messages is never held whole: not decoded, not as the SDK's
// parameters, and past maxBuffered not as one buffer. The SDK stays the one
// home of the wire format: it encodes the request with an empty message list
// (the skeleton, the body it would send), and each message is encoded with
// the SDK's own parameter type, alone, as the SDK encodes it inside the list.
// The middleware splices them into the skeleton's list on every attempt, so a
// retried request sends the same body again.

// maxBuffered is the longest body sent from memory with its length, as the
// SDKs send theirs; a longer one is streamed (chunked) as it is written. Most
// requests are far shorter. (A variable for tests.)
var maxBuffered = 8 << 20

// splice returns the middleware that sends messages in the skeleton's
// "messages" list. Each is encoded by fast (wire.go) or, when that declines,
// by its own MarshalJSON: the SDK's request encoder only compacts what that
// returns, with the HTML escaping the SDK's marshaller already applied (each
// SDK sets the two alike), so these are the bytes the list would hold
// (TestStreamedBodyIsTheSDKs holds them to it).
func splice[M json.Marshaler](messages iter.Seq[M], fast func([]byte, M) ([]byte, bool)) func(*http.Request, func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	return func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		skeleton, err := readBody(req)
		if err != nil {
			return nil, err
		}
		at, err := emptyListEnd(skeleton, "messages")
		if err != nil {
			// The SDK's own body is not as every version in go.mod writes it.
			return nil, fmt.Errorf("%w (POST %s); nothing was sent: this is a fault in arbor, please report it with this line", err, req.URL.Path)
		}
		write := func(w io.Writer) error {
			return writeSpliced(w, skeleton[:at], skeleton[at:], messages, fast)
		}
		body, n, err := openBody(write)
		if err != nil {
			return nil, err
		}
		if req.Body != nil {
			req.Body.Close() // the skeleton, read above
		}
		req.Body, req.ContentLength = body, n
		req.GetBody = func() (io.ReadCloser, error) {
			b, _, err := openBody(write)
			return b, err
		}
		return next(req)
	}
}

// readBody reads what the SDK put in the request, from a fresh copy when it
// can make one (an attempt after the first may hold a read one).
func readBody(req *http.Request) ([]byte, error) {
	body := req.Body
	if req.GetBody != nil {
		b, err := req.GetBody()
		if err != nil {
			return nil, err
		}
		body = b
	}
	if body == nil {
		return nil, errors.New("agent: the request has no body to add the messages to")
	}
	defer body.Close()
	return io.ReadAll(body)
}

// emptyListEnd is the offset just after the opening bracket of the top-level
// member name in a JSON object, whose value must be an empty list.
func emptyListEnd(obj []byte, name string) (int, error) {
	dec := jsontext.NewDecoder(bytes.NewReader(obj))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return 0, fmt.Errorf("agent: the request body is not a JSON object")
	}
	for dec.PeekKind() == '"' {
		tok, err := dec.ReadToken()
		if err != nil {
			return 0, fmt.Errorf("agent: the request body: %w", err)
		}
		if tok.String() != name {
			if err := dec.SkipValue(); err != nil {
				return 0, fmt.Errorf("agent: the request body: %w", err)
			}
			continue
		}
		if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '[' || dec.PeekKind() != ']' {
			return 0, fmt.Errorf("agent: the request body's %s is not an empty list", name)
		}
		return int(dec.InputOffset()), nil
	}
	return 0, fmt.Errorf("agent: the request body has no %s", name)
}

// writeSpliced writes head, the messages separated by commas, then tail.
func writeSpliced[M json.Marshaler](w io.Writer, head, tail []byte, messages iter.Seq[M], fast func([]byte, M) ([]byte, bool)) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.Write(head)
	first := true
	var buf []byte
	for m := range messages {
		one, ok := fast(buf[:0], m)
		if buf = one; !ok {
			var err error
			if one, err = m.MarshalJSON(); err != nil {
				return err
			}
		}
		if !first {
			bw.WriteByte(',')
		}
		first = false
		if _, err := bw.Write(one); err != nil {
			return err // the pipe was closed: the attempt is over
		}
		if cap(buf) > 1<<20 {
			buf = nil // not held for the rest of the request after one long message
		}
	}
	bw.Write(tail)
	return bw.Flush() // the first write error, if any, is kept until here
}

// openBody starts writing one attempt's body. A body that ends within
// maxBuffered bytes is returned from memory with its length; a longer one is
// returned as a pipe that write goes on filling as it is read (length -1).
// The writer stops when the pipe is closed (the transport always closes a
// request's body), so an attempt that fails early leaves nothing running.
func openBody(write func(io.Writer) error) (io.ReadCloser, int64, error) {
	s := &spillWriter{limit: maxBuffered, ready: make(chan struct{})}
	go func() {
		err := write(s)
		if s.pw != nil {
			s.pw.CloseWithError(err)
			return
		}
		s.err = err
		close(s.ready)
	}()
	<-s.ready
	switch {
	case s.pr != nil:
		return s.pr, -1, nil
	case s.err != nil:
		return nil, 0, s.err
	}
	return io.NopCloser(bytes.NewReader(s.buf.Bytes())), int64(s.buf.Len()), nil
}

// spillWriter keeps what is written in buf until it passes limit, then opens
// the pipe, closes ready and writes on into the pipe.
type spillWriter struct {
	limit int
	buf   bytes.Buffer
	pr    *io.PipeReader
	pw    *io.PipeWriter
	ready chan struct{}
	err   error // write's error, when it ended within limit
}

func (s *spillWriter) Write(p []byte) (int, error) {
	if s.pw == nil && s.buf.Len()+len(p) <= s.limit {
		return s.buf.Write(p)
	}
	if s.pw == nil {
		s.pr, s.pw = io.Pipe()
		close(s.ready)
		if _, err := s.pw.Write(s.buf.Bytes()); err != nil {
			return 0, err
		}
		s.buf = bytes.Buffer{}
	}
	return s.pw.Write(p)
}

// hasAny reports whether seq yields anything: with no message the SDK's own
// body is sent as it is, without a list to splice into.
func hasAny[M any](seq iter.Seq[M]) bool {
	for range seq {
		return true
	}
	return false
}
