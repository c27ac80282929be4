package cli

import (
	"runtime/debug"

	"github.com/spf13/cobra"
)

// buildVersion is what the binary knows of its own build: the module version
// ("(devel)" for a build from a checkout), the VCS revision and whether the
// tree had uncommitted changes, and the Go toolchain.
type buildVersion struct {
	Version  string `json:"version"`
	Commit   string `json:"commit,omitempty"`
	Time     string `json:"commitTime,omitempty"`
	Modified bool   `json:"modified,omitempty"`
	Go       string `json:"go"`
}

func readBuildVersion() buildVersion {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return buildVersion{Version: "unknown", Go: "unknown"}
	}
	v := buildVersion{Version: info.Main.Version, Go: info.GoVersion}
	if v.Version == "" {
		v.Version = "(devel)"
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Commit = s.Value
		case "vcs.time":
			v.Time = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	return v
}

// String is the one line 'arbor version' and 'arbor --version' print.
func (v buildVersion) String() string {
	s := "arbor " + v.Version
	if v.Commit != "" {
		c := v.Commit
		if len(c) > 12 {
			c = c[:12]
		}
		s += " commit " + c
		if v.Modified {
			s += " (modified)"
		}
	}
	return s + " " + v.Go
}

func newCmdVersion(ios *IO, g *Global) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print arbor's version, commit and Go version",
		Long: `Print the module version arbor was built as ("(devel)" when built from a
checkout), the commit it was built from (with "(modified)" when the checkout
had uncommitted changes) and the Go version that built it, all read from the
binary's build information. --json prints them as an object.`,
		Example: `  arbor version
  arbor version --json`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			v := readBuildVersion()
			if g.JSON {
				return ios.JSON(v)
			}
			ios.Printf("%s\n", v)
			return nil
		},
	}
}
