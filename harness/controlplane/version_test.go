package controlplane

import (
	"testing"

	"gotest.tools/v3/assert"
	"k8s.io/apimachinery/pkg/version"

	"github.com/racekit/racekit/internal/assets"
)

// TestVersionOf reads the release from /version: a stamped gitVersion as
// it is; an unstamped one from major and minor, with the patch of the
// release whose folder the binaries are in, which must agree.
func TestVersionOf(t *testing.T) {
	unstamped := func(major, minor string) version.Info {
		return version.Info{Major: major, Minor: minor, GitVersion: "v0.0.0-master+$Format:%H$"}
	}
	for _, tc := range []struct {
		name    string
		info    version.Info
		release string
		fromEnv bool
		want    string
		wantErr string
	}{
		{"stamped", version.Info{Major: "1", Minor: "35", GitVersion: "v1.35.4"}, "", false, "1.35.4", ""},
		{"unstamped, the default", unstamped("1", "37"), "", false, assets.KubernetesVersion, ""},
		{"unstamped, a release of the matrix", unstamped("1", "35"), "1.35.4", false, "1.35.4", ""},
		{"unstamped, in another release's folder", unstamped("1", "36"), "1.35.4", false, "", "the API server says it is Kubernetes 1.36, but its binaries are in the folder of 1.35.4"},
		{"unstamped, from KUBEBUILDER_ASSETS", unstamped("1", "33+"), "", true, "1.33", ""},
		{"no version at all", version.Info{}, "", false, "", "the API server says no version"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(assets.ReleaseEnv, tc.release)
			got, err := versionOf(tc.info, tc.fromEnv)
			if tc.wantErr != "" {
				assert.ErrorContains(t, err, tc.wantErr)
				return
			}
			assert.NilError(t, err)
			assert.Equal(t, got, tc.want)
		})
	}
}
