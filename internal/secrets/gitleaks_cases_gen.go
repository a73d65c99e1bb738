//go:build ignore

// gitleaks_cases_gen.go writes testdata/gitleaks-cases.json: the true and
// false positive examples that gitleaks' rule definitions carry
// (cmd/generate/config/rules/*.go), for the recall test. They are made by
// gitleaks' own generator, so this program runs it: it copies the module
// from the module cache into a temporary directory, replaces the body of
// utils.Validate (and ValidateWithPaths) with one that records each rule's
// examples, and runs cmd/generate/config there. It also copies
// config/gitleaks.toml and the MIT LICENSE into gitleaks/, so the embedded
// rules and the examples come from the same version.
//
// Run from internal/secrets: go run gitleaks_cases_gen.go
// (it needs the Go module proxy to fetch gitleaks' dependencies).
package main

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

const module = "github.com/zricethezav/gitleaks/v8@v8.30.1"

// recorder replaces cmd/generate/config/utils/validate.go in the copy.
const recorder = `package utils

import (
	"encoding/json"
	"os"

	"github.com/zricethezav/gitleaks/v8/config"
)

type recorded struct {
	Rule           string   ` + "`json:\"rule\"`" + `
	TruePositives  []string ` + "`json:\"tp\"`" + `
	FalsePositives []string ` + "`json:\"fp\"`" + `
}

func record(rule string, tps, fps []string) {
	f, err := os.OpenFile(os.Getenv("GITLEAKS_CASES_OUT"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		panic(err)
	}
	defer f.Close()
	if err := json.NewEncoder(f).Encode(recorded{rule, tps, fps}); err != nil {
		panic(err)
	}
}

func Validate(rule config.Rule, truePositives []string, falsePositives []string) *config.Rule {
	record(rule.RuleID, truePositives, falsePositives)
	return &rule
}

func ValidateWithPaths(rule config.Rule, truePositives map[string]string, falsePositives map[string]string) *config.Rule {
	var tps, fps []string
	for _, v := range truePositives {
		tps = append(tps, v)
	}
	for _, v := range falsePositives {
		fps = append(fps, v)
	}
	record(rule.RuleID, tps, fps)
	return &rule
}
`

type recorded struct {
	Rule           string   `json:"rule"`
	TruePositives  []string `json:"tp"`
	FalsePositives []string `json:"fp"`
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "gitleaks_cases_gen:", err)
		os.Exit(1)
	}
}

func run() error {
	out, err := exec.Command("go", "mod", "download", "-json", module).Output()
	if err != nil {
		return fmt.Errorf("download %s: %w", module, err)
	}
	var info struct{ Dir string }
	if err := json.Unmarshal(out, &info); err != nil || info.Dir == "" {
		return fmt.Errorf("download %s: no directory in %q", module, out)
	}
	tmp, err := os.MkdirTemp("", "gitleaks-gen-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	src := filepath.Join(tmp, "gitleaks")
	if err := os.CopyFS(src, os.DirFS(info.Dir)); err != nil {
		return fmt.Errorf("copy module: %w", err)
	}
	// The module cache is read-only; the copy keeps its modes.
	if err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		mode := os.FileMode(0o644)
		if d.IsDir() {
			mode = 0o755
		}
		return os.Chmod(p, mode)
	}); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(src, "cmd/generate/config/utils/validate.go"), []byte(recorder), 0o644); err != nil {
		return err
	}
	raw := filepath.Join(tmp, "cases.jsonl")
	cmd := exec.Command("go", "run", ".", filepath.Join(tmp, "gitleaks.toml"))
	cmd.Dir = filepath.Join(src, "cmd/generate/config")
	cmd.Env = append(os.Environ(), "GITLEAKS_CASES_OUT="+raw, "GOFLAGS=-mod=mod")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("run gitleaks' generator: %w", err)
	}
	lines, err := os.ReadFile(raw)
	if err != nil {
		return err
	}
	var cases []recorded
	for _, l := range strings.Split(strings.TrimSpace(string(lines)), "\n") {
		var r recorded
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			return fmt.Errorf("recorded case: %w", err)
		}
		cases = append(cases, r)
	}
	b, err := json.MarshalIndent(map[string]any{"module": module, "rules": cases}, "", "\t")
	if err != nil {
		return err
	}
	if err := os.WriteFile("testdata/gitleaks-cases.json", append(b, '\n'), 0o644); err != nil {
		return err
	}
	for _, f := range [][2]string{{"config/gitleaks.toml", "gitleaks/gitleaks.toml"}, {"LICENSE", "gitleaks/LICENSE"}} {
		b, err := os.ReadFile(filepath.Join(info.Dir, f[0]))
		if err != nil {
			return err
		}
		if err := os.WriteFile(f[1], b, 0o644); err != nil {
			return err
		}
	}
	fmt.Fprintf(os.Stderr, "%d rules' cases written\n", len(cases))
	return nil
}
