// Package publicapi checks promises about arbor's exported Go API as a whole.
package publicapi

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// experimental are import paths whose types may not appear in an exported
// signature: their API can still change, and a caller would have to import
// them to use arbor.
var experimental = []string{"github.com/go-json-experiment/json"}

// TestNoExperimentalTypesExported parses every public package (not internal/,
// not examples/, not tests) and fails on an exported function, method, type,
// field, variable or constant whose type names a package from experimental.
func TestNoExperimentalTypesExported(t *testing.T) {
	root := filepath.Join("..", "..")
	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if rel == "internal" || rel == "examples" || rel == "testdata" || strings.HasPrefix(d.Name(), ".") && rel != "." || d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if f.Name.Name == "main" {
			return nil
		}
		checked++
		for _, bad := range exportedUses(f) {
			t.Errorf("%s: %s", rel, bad)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 20 {
		t.Fatalf("checked only %d files: is the walk rooted at the module?", checked)
	}
}

// exportedUses lists the exported declarations of f whose types use an
// experimental package, by the name f imports it under.
func exportedUses(f *ast.File) []string {
	names := map[string]bool{}
	for _, imp := range f.Imports {
		p := strings.Trim(imp.Path.Value, `"`)
		for _, e := range experimental {
			if p == e || strings.HasPrefix(p, e+"/") {
				name := filepath.Base(p)
				if imp.Name != nil {
					name = imp.Name.Name
				}
				names[name] = true
			}
		}
	}
	if len(names) == 0 {
		return nil
	}
	uses := func(n ast.Node) bool {
		found := false
		ast.Inspect(n, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if id, ok := sel.X.(*ast.Ident); ok && names[id.Name] {
					found = true
				}
			}
			return !found
		})
		return found
	}
	var out []string
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() || d.Recv != nil && !receiverExported(d.Recv) {
				continue
			}
			if uses(d.Type) {
				out = append(out, "func "+d.Name.Name)
			}
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					if s.Name.IsExported() && exportedPartUses(s.Type, uses) {
						out = append(out, "type "+s.Name.Name)
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.IsExported() && s.Type != nil && uses(s.Type) {
							out = append(out, "var/const "+n.Name)
						}
					}
				}
			}
		}
	}
	return out
}

// exportedPartUses reports whether the exported part of a type uses an
// experimental package: a struct's exported fields, an interface's methods,
// anything else whole.
func exportedPartUses(t ast.Expr, uses func(ast.Node) bool) bool {
	st, ok := t.(*ast.StructType)
	if !ok {
		return uses(t)
	}
	for _, f := range st.Fields.List {
		exported := len(f.Names) == 0 // embedded: its methods are promoted
		for _, n := range f.Names {
			exported = exported || n.IsExported()
		}
		if exported && uses(f.Type) {
			return true
		}
	}
	return false
}

func receiverExported(recv *ast.FieldList) bool {
	t := recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if g, ok := t.(*ast.IndexExpr); ok {
		t = g.X
	}
	id, ok := t.(*ast.Ident)
	return ok && id.IsExported()
}
