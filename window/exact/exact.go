// Package exact counts tokens exactly with the o200k BPE tokenizer (the
// GPT-4o family's), loaded offline from an embedded table. The table adds
// about 7 MB to a binary, which is why it lives here and not in package
// window: it is linked only into programs that import this package.
//
//	est := window.DefaultEstimator
//	est.Exact, _ = exact.New()
//
// Other model families tokenize differently; o200k is within a few percent of
// them on English and code, closer than any byte-rate estimate.
package exact

import (
	"fmt"
	"sync"

	"github.com/pkoukk/tiktoken-go"
	loader "github.com/pkoukk/tiktoken-go-loader"
)

// Counter counts tokens with o200k. It is safe for concurrent use.
type Counter struct {
	enc *tiktoken.Tiktoken
}

var (
	once    sync.Once
	shared  *Counter
	loadErr error
)

// New returns the counter, loading the table on first use (about 1 s).
func New() (*Counter, error) {
	once.Do(func() {
		tiktoken.SetBpeLoader(loader.NewOfflineLoader())
		enc, err := tiktoken.GetEncoding("o200k_base")
		if err != nil {
			loadErr = fmt.Errorf("exact: load o200k: %w", err)
			return
		}
		shared = &Counter{enc: enc}
	})
	return shared, loadErr
}

// Count returns the number of o200k tokens in text; special tokens count as text.
func (c *Counter) Count(text string) int {
	return len(c.enc.EncodeOrdinary(text))
}
