package exact

import "testing"

func TestCount(t *testing.T) {
	c, err := New()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		text string
		want int
	}{
		{"", 0},
		{"hello world", 2},
		{"func main() {}", 4},
	} {
		if got := c.Count(tc.text); got != tc.want {
			t.Errorf("Count(%q) = %d, want %d", tc.text, got, tc.want)
		}
	}
}
