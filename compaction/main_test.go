package compaction

import (
	"os"
	"testing"

	"github.com/arborlog/arbor/internal/testhome"
)

func TestMain(m *testing.M) { os.Exit(testhome.Run(m)) }
