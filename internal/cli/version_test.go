package cli

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"
)

func TestVersion(t *testing.T) {
	r := runArbor(t, "", "version")
	if r.code != 0 || !strings.HasPrefix(r.out, "arbor ") || !strings.HasSuffix(r.out, " "+runtime.Version()+"\n") {
		t.Fatalf("arbor version = %q (exit %d, stderr %q), want a line naming arbor and %s", r.out, r.code, r.err, runtime.Version())
	}
	if flag := runArbor(t, "", "--version"); flag.out != r.out || flag.code != 0 {
		t.Errorf("arbor --version = %q, arbor version = %q: they should agree", flag.out, r.out)
	}
	j := runArbor(t, "", "version", "--json")
	var v buildVersion
	if err := json.Unmarshal([]byte(j.out), &v); err != nil || v.Go != runtime.Version() || v.Version == "" {
		t.Errorf("arbor version --json = %q (%v)", j.out, err)
	}
}

func TestVersionLine(t *testing.T) {
	for _, c := range []struct {
		v    buildVersion
		want string
	}{
		{buildVersion{Version: "v0.4.0", Go: "go1.26.8"}, "arbor v0.4.0 go1.26.8"},
		{buildVersion{Version: "(devel)", Commit: "14ee631567b1d9680dee0032ed831eb16e6836e0", Go: "go1.26.8"}, "arbor (devel) commit 14ee631567b1 go1.26.8"},
		{buildVersion{Version: "(devel)", Commit: "14ee631567b1d9680dee0032ed831eb16e6836e0", Modified: true, Go: "go1.26.8"}, "arbor (devel) commit 14ee631567b1 (modified) go1.26.8"},
	} {
		if got := c.v.String(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.v, got, c.want)
		}
	}
}
