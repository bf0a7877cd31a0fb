// Package rabbitmq races the rabbitmq cluster-operator as it is published,
// unmodified: each release's binary, built from its Go module by make
// operators, runs as its own process through racekit's racing proxy, and
// the scenarios in testdata reproduce three bugs that Sieve (OSDI'22) found
// in it: #648 (stale state), #758 (unobserved state) and #782
// (intermediate state). docs/real-bugs.md tells each story.
//
// The scenarios spawn a release by the name of its link on PATH
// (rabbitmq-v1.6.0, rabbitmq-v1.7.0, rabbitmq-v1.10.0; Link makes them).
// The regression forms, which assert the correct outcome, name no release:
// the release-under-test command sets $OPERATOR and $METRICS to the release
// a test runs them against, so that one file fails on the buggy release
// and passes on the one that fixed the bug.
package rabbitmq

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/racekit/racekit"
	"github.com/racekit/racekit/realbugs/operators"
)

// Release is one release of the operator as scenarios spawn it.
type Release struct {
	operators.Operator
	// Command is the name of its link on PATH, such as rabbitmq-v1.6.0.
	Command string
	// MetricsFlag is the flag that says where it serves its metrics:
	// scenarios give it $METRICS_ADDR, a free port of loopback that spawn
	// chooses, so that idle settles the operator by its workqueues (not
	// by a quiet period, a matter of the clock), and scenarios running
	// side by side do not fight over its default, :9782. v1.8.3 renamed
	// the flag.
	MetricsFlag string
}

// The releases the scenarios race: v1.6.0 has all three bugs, v1.7.0
// fixes #648, v1.10.0 is the first release the module proxy serves that
// fixes #782, and no release fixes #758.
var (
	V160  = Release{operators.RabbitMQ160, "rabbitmq-v1.6.0", "--metrics-addr"}
	V170  = Release{operators.RabbitMQ170, "rabbitmq-v1.7.0", "--metrics-addr"}
	V1100 = Release{operators.RabbitMQ1100, "rabbitmq-v1.10.0", "--metrics-bind-address"}
)

// Releases lists them, oldest first.
var Releases = []Release{V160, V170, V1100}

// Link makes dir hold a link to each release's built binary, named by its
// Command, for PATH. It returns an error that wraps operators.ErrMissing,
// and says to run make operators, when a release has not been built.
func Link(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	var errs []error
	for _, r := range Releases {
		b, err := r.Find()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		link := filepath.Join(dir, r.Command)
		if target, err := os.Readlink(link); err == nil && target == b.Binary {
			continue
		}
		// A new link under a temporary name, renamed over the old one, so
		// that a test process starting beside this one never misses it.
		tmp := link + ".tmp"
		_ = os.Remove(tmp)
		if err := os.Symlink(b.Binary, tmp); err != nil {
			return fmt.Errorf("link %s: %w", r.Command, err)
		}
		if err := os.Rename(tmp, link); err != nil {
			return fmt.Errorf("link %s: %w", r.Command, err)
		}
	}
	return errors.Join(errs...)
}

// CRDs returns the CRD folder every scenario installs: v1.6.0's, for every
// release. The CRD is cluster-scoped, so one test process has one, and
// v1.6.0's is the one all three releases work with: it defaults
// spec.image, which v1.10.0's leaves to the operator, and without which
// v1.6.0 writes a StatefulSet the API server refuses (422).
func CRDs() (string, error) {
	b, err := V160.Find()
	if err != nil {
		return "", err
	}
	return b.CRDs, nil
}

// Setup returns what the scenarios in dir race: v1.6.0's CRDs, and the
// commands storageclass and release-under-test, the latter for r.
func Setup(dir string, r Release) (racekit.Setup, error) {
	crds, err := CRDs()
	if err != nil {
		return racekit.Setup{}, err
	}
	return racekit.Setup{Dir: dir, CRDs: []string{crds}, Commands: []*racekit.Command{releaseCommand(r), storageClassCommand(), volumeCommand()}}, nil
}

// releaseCommand sets the script variables a regression form spawns the
// release under test with.
func releaseCommand(r Release) *racekit.Command {
	return &racekit.Command{
		Name: "release-under-test", Group: "setup", MinArgs: 0, MaxArgs: 0,
		Summary: "set $OPERATOR to the command of the rabbitmq cluster-operator release the test runs this scenario against (" + r.Command + " here) and $METRICS to its flag that serves the metrics at $METRICS_ADDR (" + r.MetricsFlag + "=$METRICS_ADDR), which needs metrics=$METRICS_ADDR on the spawn line: for a regression form, which one file runs against every release",
		Run: func(sc *racekit.Scenario, inv racekit.Invocation) error {
			inv.Setenv("OPERATOR", r.Command)
			inv.Setenv("METRICS", r.MetricsFlag+"="+racekit.MetricsAddr)
			return nil
		},
	}
}

// storageClasses are the StorageClasses this process has created, by name:
// cluster-scoped, so every scenario of the process shares them.
var storageClasses sync.Map // name → *sync.Once-guarded error

type once struct {
	sync.Once
	err error
}

// storageClassCommand makes a StorageClass that allows volume expansion,
// once per process: #782's PVC can be resized only when its class says so
// (the PersistentVolumeClaimResize admission plugin refuses it otherwise).
func storageClassCommand() *racekit.Command {
	return &racekit.Command{
		Name: "storageclass", Args: "NAME", Group: "setup", MinArgs: 1, MaxArgs: 1,
		Summary: "make sure the StorageClass NAME exists, with allowVolumeExpansion and no real provisioner (example.com/none), so that a bound PVC of that class may be resized: created once per test process, not recorded, since it is cluster-scoped and every scenario of the process shares it",
		Run: func(sc *racekit.Scenario, inv racekit.Invocation) error {
			name := inv.Args[0]
			v, _ := storageClasses.LoadOrStore(name, &once{})
			o := v.(*once)
			o.Do(func() { o.err = createStorageClass(sc, name) })
			return o.err
		},
	}
}

func createStorageClass(sc *racekit.Scenario, name string) error {
	kube, err := kubernetes.NewForConfig(sc.ControlPlane().Admin())
	if err != nil {
		return fmt.Errorf("client for the StorageClass: %w", err)
	}
	class := &storagev1.StorageClass{
		ObjectMeta:           metav1.ObjectMeta{Name: name},
		Provisioner:          "example.com/none",
		AllowVolumeExpansion: ptr.To(true),
	}
	_, err = kube.StorageV1().StorageClasses().Create(sc.Context(), class, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("create storageclasses/%s: %w", name, err)
	}
	return nil
}

// volumeCommand makes a PersistentVolume for one PVC of the scenario, for
// kube-controller-manager's PV controller (persistentvolume-binder) to
// bind, as a cluster's provisioner would have made it: with pods that run,
// the scheduler binds no pod whose PVC is unbound. The PV is pre-bound to
// the PVC by name (claimRef), so that no other scenario's PVC of the same
// class takes it; cluster-scoped, it is made by the harness, unrecorded, as
// the StorageClass is, and deleted when the scenario ends. It must exist
// before the PVC does: the PV controller looks for a volume when the
// claim comes, and again only at its resync, 15 s later.
func volumeCommand() *racekit.Command {
	return &racekit.Command{
		Name: "volume", Args: "PVC SIZE CLASS", Group: "setup", MinArgs: 3, MaxArgs: 3,
		Summary: "make a hostPath PersistentVolume of SIZE and StorageClass CLASS pre-bound to the scenario's PVC named PVC, for controller-manager's persistentvolume-binder to bind when the PVC comes: unrecorded, cluster-scoped, deleted when the scenario ends",
		Run: func(sc *racekit.Scenario, inv racekit.Invocation) error {
			pvc, class := inv.Args[0], inv.Args[2]
			size, err := resource.ParseQuantity(inv.Args[1])
			if err != nil {
				return racekit.UsageError("bad SIZE %q: want a quantity such as 10Gi", inv.Args[1])
			}
			kube, err := kubernetes.NewForConfig(sc.ControlPlane().Admin())
			if err != nil {
				return fmt.Errorf("client for the PersistentVolume: %w", err)
			}
			name := sc.Namespace + "-" + pvc
			pv := &corev1.PersistentVolume{
				ObjectMeta: metav1.ObjectMeta{Name: name},
				Spec: corev1.PersistentVolumeSpec{
					Capacity:               corev1.ResourceList{corev1.ResourceStorage: size},
					AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					StorageClassName:       class,
					PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/racekit/" + name}},
					ClaimRef:               &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: sc.Namespace, Name: pvc},
				},
			}
			if _, err := kube.CoreV1().PersistentVolumes().Create(sc.Context(), pv, metav1.CreateOptions{}); err != nil {
				return fmt.Errorf("create persistentvolumes/%s: %w", name, err)
			}
			sc.Defer(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				_ = kube.CoreV1().PersistentVolumes().Delete(ctx, name, metav1.DeleteOptions{})
			})
			return nil
		},
	}
}
