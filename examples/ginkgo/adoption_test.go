package ginkgo_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestAdoptionDiff checks what the README says adopting racekit costs a
// kubebuilder suite: the lines added to and removed from the scaffold's
// suite_test.go (testdata/scaffold_suite_test.go.txt, envtest's form) to
// make this package's suite_test.go, counted as diff counts them (the
// longest common run of lines stays).
func TestAdoptionDiff(t *testing.T) {
	read := func(name string) []string {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Split(string(data), "\n")
	}
	scaffold, adopted := read("testdata/scaffold_suite_test.go.txt"), read("suite_test.go")
	common := lcs(scaffold, adopted)
	added, removed := len(adopted)-common, len(scaffold)-common

	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var saysAdded, saysRemoved int
	_, says, found := strings.Cut(string(readme), "a diff of ")
	if _, err := fmt.Sscanf(says, "%d added lines and %d removed", &saysAdded, &saysRemoved); !found || err != nil {
		t.Fatal(`README.md does not say "a diff of N added lines and M removed" in "In a Ginkgo suite"`)
	}
	if saysAdded != added || saysRemoved != removed {
		t.Errorf("README.md says adopting racekit is a diff of %d added lines and %d removed; suite_test.go against the scaffold is %d added and %d removed",
			saysAdded, saysRemoved, added, removed)
	}
}

// lcs is the length of the longest common subsequence of a and b.
func lcs(a, b []string) int {
	prev, cur := make([]int, len(b)+1), make([]int, len(b)+1)
	for i := range a {
		for j := range b {
			switch {
			case a[i] == b[j]:
				cur[j+1] = prev[j] + 1
			case prev[j+1] >= cur[j]:
				cur[j+1] = prev[j+1]
			default:
				cur[j+1] = cur[j]
			}
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
