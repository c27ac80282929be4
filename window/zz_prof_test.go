package window

import (
	"os"
	"runtime"
	"runtime/pprof"
	"testing"

	"github.com/arborlog/arbor/session"
)

func TestZZProfBuild(t *testing.T) {
	p := os.Getenv("ARBOR_PROF_FILE")
	if p == "" {
		t.Skip()
	}
	runtime.MemProfileRate = 16384
	data, _ := os.ReadFile(p)
	l := session.Load(data)
	c := l.Cursor("")
	ctx := c.Context()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	t.Logf("after load+ctx: heap %d MB", ms.HeapAlloc>>20)
	p2 := &planner{est: &DefaultEstimator, calls: Calls{}}
	p2.load(ctx.Messages)
	p2.pair()
	p2.group()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	t.Logf("after planner load: heap %d MB, items %d", ms.HeapAlloc>>20, len(p2.items))
	f, _ := os.Create("/tmp/scale/build.heap")
	pprof.WriteHeapProfile(f)
	f.Close()
	runtime.KeepAlive(l)
	runtime.KeepAlive(p2)
	runtime.KeepAlive(ctx)
}
