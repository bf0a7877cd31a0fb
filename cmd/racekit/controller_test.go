package main

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"testing"

	"gotest.tools/v3/assert"
	appsv1 "k8s.io/api/apps/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

func TestParseControllerFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    controllerFlags
		wantErr string
	}{
		{"defaults", nil, controllerFlags{workers: 1}, ""},
		{"all", []string{"--kubeconfig", "/k", "--namespace=demo", "--registry-url", "http://reg:8080", "--metrics-addr", ":8080", "--workers", "4"},
			controllerFlags{kubeconfig: "/k", namespace: "demo", registryURL: "http://reg:8080", metricsAddr: ":8080", workers: 4}, ""},
		{"zero workers", []string{"--workers=0"}, controllerFlags{}, "--workers must be at least 1, got 0"},
		{"registry without scheme", []string{"--registry-url", "reg:8080"}, controllerFlags{}, `--registry-url must be an http or https URL, got "reg:8080"`},
		{"registry without host", []string{"--registry-url", "http://"}, controllerFlags{}, `--registry-url must be an http or https URL, got "http://"`},
		{"stray argument", []string{"run"}, controllerFlags{}, `unexpected argument "run"`},
		{"unknown flag", []string{"--worker=2"}, controllerFlags{}, "flag provided but not defined: -worker"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseControllerFlags(tc.args)
			if tc.wantErr != "" {
				assert.Error(t, err, tc.wantErr)
				return
			}
			assert.NilError(t, err)
			assert.Equal(t, got, tc.want)
		})
	}
}

// TestControllerHelp checks that racekit controller -h shows the usage and
// every flag on stdout, and that a bad value is a usage error.
func TestControllerHelp(t *testing.T) {
	_, err := parseControllerFlags([]string{"-h"})
	assert.Assert(t, errors.Is(err, flag.ErrHelp), "got %v", err)
	var stdout, stderr bytes.Buffer
	assert.Equal(t, runController([]string{"-h"}, &stdout, &stderr), exitOK)
	assert.Assert(t, bytes.HasPrefix(stdout.Bytes(), []byte(controllerUsage)), stdout.String())
	for _, name := range []string{"-kubeconfig", "-namespace", "-registry-url", "-metrics-addr", "-workers"} {
		assert.Assert(t, bytes.Contains(stdout.Bytes(), []byte(name)), "help lacks %s:\n%s", name, stdout.String())
	}
	assert.Equal(t, stderr.String(), "")
	assert.Equal(t, runController([]string{"--workers=0"}, io.Discard, io.Discard), exitUsage)
}

const kubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster:
    server: https://HOST:6443
users:
- name: u
  user:
    token: t
contexts:
- name: x
  context: {cluster: c, user: u}
current-context: x
`

func TestLoadKubeconfig(t *testing.T) {
	dir := t.TempDir()
	write := func(name, host string) string {
		p := filepath.Join(dir, name)
		assert.NilError(t, os.WriteFile(p, bytes.ReplaceAll([]byte(kubeconfig), []byte("HOST"), []byte(host)), 0o600))
		return p
	}
	flagFile, envFile := write("flag", "from-flag"), write("env", "from-env")
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == "KUBECONFIG" {
				return v
			}
			return ""
		}
	}
	tests := []struct {
		name     string
		path     string
		getenv   func(string) string
		wantHost string
		wantErr  string
	}{
		{"flag wins over env", flagFile, env(envFile), "https://from-flag:6443", ""},
		{"env", "", env(envFile), "https://from-env:6443", ""},
		{"env list", "", env(filepath.Join(dir, "missing") + string(filepath.ListSeparator) + envFile), "https://from-env:6443", ""},
		{"env names no file", "", env(filepath.Join(dir, "missing")), "", "no kubeconfig: no file of $KUBECONFIG (" + filepath.Join(dir, "missing") + ") exists"},
		{"flag names no file", filepath.Join(dir, "missing"), env(""), "", "load kubeconfig: stat " + filepath.Join(dir, "missing") + ": no such file or directory"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := loadKubeconfig(tc.path, tc.getenv)
			if tc.wantErr != "" {
				assert.Error(t, err, tc.wantErr)
				return
			}
			assert.NilError(t, err)
			assert.Equal(t, cfg.Host, tc.wantHost)
		})
	}
}

// TestDeployManifestArgs checks that the Deployment in docs/deploy runs a
// command line that racekit controller accepts.
func TestDeployManifestArgs(t *testing.T) {
	f, err := os.Open("../../docs/deploy/controller.yaml")
	assert.NilError(t, err)
	defer f.Close()
	dec := utilyaml.NewYAMLOrJSONDecoder(f, 4096)
	var found bool
	for {
		var dep appsv1.Deployment
		err := dec.Decode(&dep)
		if errors.Is(err, io.EOF) {
			break
		}
		assert.NilError(t, err)
		if dep.Kind != "Deployment" {
			continue
		}
		found = true
		c := dep.Spec.Template.Spec.Containers[0]
		assert.Assert(t, len(c.Args) > 0 && c.Args[0] == "controller", "args %q must start with the controller command", c.Args)
		_, err = parseControllerFlags(c.Args[1:])
		assert.NilError(t, err, "args %q", c.Args)
	}
	assert.Assert(t, found, "no Deployment in controller.yaml")
}
