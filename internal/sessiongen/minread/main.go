// Command minread is the floor BENCHMARKS.md's start-up figures are measured
// against: a Go program that reads a session file, decodes every line with
// encoding/json and prints the number of entries and the last entry's id.
// What arbor info takes beyond it is arbor's own cost, not Go's.
//
//	usage: minread FILE.jsonl
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"log"
	"os"
)

func main() {
	if len(os.Args) != 2 {
		log.Fatal("usage: minread FILE.jsonl")
	}
	f, err := os.Open(os.Args[1])
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 64<<20)
	n, last := 0, ""
	for sc.Scan() {
		var e map[string]any
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			log.Fatalf("%s: line %d: %v", os.Args[1], n+1, err)
		}
		if id, ok := e["id"].(string); ok {
			last = id
		}
		n++
	}
	if err := sc.Err(); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d entries, last id %s\n", n, last)
}
