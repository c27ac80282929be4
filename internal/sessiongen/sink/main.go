// Command sink is the provider bench.sh points arbor -p at: it reads each
// request's body to its end, as a provider does before it answers, and
// answers 400, so that the request is made whole and the run then ends. It
// logs each body's length and SHA-256, so that two builds can be shown to
// send the same bytes.
//
//	usage: sink ADDR-FILE    (listens on a free loopback port and writes its URL to ADDR-FILE)
package main

import (
	"crypto/sha256"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
)

func main() {
	if len(os.Args) != 2 {
		log.Fatal("usage: sink ADDR-FILE")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(os.Args[1], []byte("http://"+ln.Addr().String()), 0o644); err != nil {
		log.Fatal(err)
	}
	log.Fatal(http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := sha256.New()
		n, err := io.Copy(h, r.Body)
		fmt.Fprintf(os.Stderr, "sink: %s %s: %d bytes read (%v), sha256 %x\n", r.Method, r.URL.Path, n, err, h.Sum(nil))
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"type":"error","error":{"type":"invalid_request_error","message":"sink: the request was read and refused"}}`)
	})))
}
