package cli

import "testing"

// TestHeapLimitFor: the soft limit is set for a session as large as issue 9's
// (189 MB, 1,000,000 entries), and not for a small one (nothing to bound) or
// one whose loaded form would leave the collector no headroom under it (it
// would run continuously).
func TestHeapLimitFor(t *testing.T) {
	cases := []struct {
		size    int64
		entries int
		want    int64
	}{
		{188_889_030, 1_000_000, heapLimit}, // plain1m
		{100_000_000, 9_835, 0},             // issue 3's big100: ~100 MB loaded, far from the limit
		{390_119_845, 1_000_000, 0},         // chain1m: ~690 MB loaded
		{2_000_000, 10_000, 0},
	}
	for _, c := range cases {
		if got := heapLimitFor(c.size, c.entries); got != c.want {
			t.Errorf("heapLimitFor(%d, %d) = %d, want %d", c.size, c.entries, got, c.want)
		}
	}
}
