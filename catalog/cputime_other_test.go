//go:build !unix

package catalog

import "time"

// cpuTime is unknown here: benchmarks report 0 CPU time.
func cpuTime() time.Duration { return 0 }
