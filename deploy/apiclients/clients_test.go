package apiclients

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	// What the code oapi-codegen generates by default imports. Importing it
	// here keeps it in go.mod and go.sum and in the module cache, so the
	// generated code builds against the root module's versions offline.
	_ "github.com/getkin/kin-openapi/openapi3"
	_ "github.com/labstack/echo/v4"
	_ "github.com/oapi-codegen/runtime"
	_ "github.com/oapi-codegen/runtime/types"
)

const tsDir = "ts" // package.json and package-lock.json of the pinned npm tools

func rootDir(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// run runs name in dir and fails the test with its output when it fails.
func run(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s (in %s): %v\n%s", name, strings.Join(args, " "), dir, err, out)
	}
	return string(out)
}

// TestOapiCodegenCompiles generates Go code from the document with
// oapi-codegen's default options (types, client, echo server, embedded spec),
// as `oapi-codegen -package x openapi.yaml` does, and builds it. Schema names
// that collide with the names it derives from operations (loginResponse for
// operation login) fail here.
func TestOapiCodegenCompiles(t *testing.T) {
	t.Parallel()
	root := rootDir(t)
	dir := t.TempDir()
	out := run(t, root, nil, "go", "tool", "oapi-codegen", "-package", "apiclient",
		"-o", filepath.Join(dir, "apiclient.go"), filepath.Join(root, "contracts", "openapi.yaml"))
	if out != "" {
		t.Logf("oapi-codegen: %s", out)
	}

	// A module of its own with the root module's requirements and checksums:
	// the build uses exactly the versions go.mod pins and fetches nothing.
	for _, f := range []string{"go.mod", "go.sum"} {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{"GOWORK=off", "GOPROXY=off", "GOFLAGS=-mod=readonly"}
	run(t, dir, env, "go", "mod", "edit", "-module", "apiclientcheck",
		"-replace", "github.com/ledgerplatform/ledger/contracts="+filepath.Join(root, "contracts"))
	run(t, dir, env, "go", "build", "./...")
}

// TestOpenAPITypeScriptCompiles generates TypeScript types from the document
// with openapi-typescript (default options) and type-checks them with tsc.
// The tools come from ts/node_modules, which `make tools` installs.
func TestOpenAPITypeScriptCompiles(t *testing.T) {
	t.Parallel()
	root := rootDir(t)
	ts, err := filepath.Abs(tsDir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatal("node not found on PATH: the TypeScript client check needs Node.js and npm")
	}
	checkInstalled(t, ts)

	dir := t.TempDir()
	api := filepath.Join(dir, "api.ts")
	out := run(t, dir, nil, filepath.Join(ts, "node_modules", ".bin", "openapi-typescript"),
		filepath.Join(root, "contracts", "openapi.yaml"), "-o", api)
	t.Logf("openapi-typescript: %s", out)
	run(t, dir, nil, filepath.Join(ts, "node_modules", ".bin", "tsc"), "--noEmit",
		"--strict", "--exactOptionalPropertyTypes", "--noUncheckedIndexedAccess",
		"--target", "es2022", "--module", "esnext", "--moduleResolution", "bundler", api)
}

// checkInstalled fails unless ts/node_modules holds the versions
// ts/package.json pins, naming the command that installs them.
func checkInstalled(t *testing.T, ts string) {
	t.Helper()
	const fix = "run `make tools` (npm ci --prefix deploy/apiclients/ts)"
	var pkg struct {
		DevDependencies map[string]string `json:"devDependencies"`
	}
	readJSON(t, filepath.Join(ts, "package.json"), &pkg)
	for name, want := range pkg.DevDependencies {
		var got struct {
			Version string `json:"version"`
		}
		b, err := os.ReadFile(filepath.Join(ts, "node_modules", name, "package.json"))
		if errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s is not installed in %s/node_modules: %s", name, ts, fix)
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		if got.Version != want {
			t.Fatalf("%s %s installed in %s/node_modules, package.json pins %s: %s", name, got.Version, ts, want, fix)
		}
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
