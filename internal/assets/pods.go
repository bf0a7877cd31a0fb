package assets

// The parts of a cluster that make pods run, which envtest lacks too: the
// real kube-scheduler, which binds each pod to a node, and kubemark's
// hollow node (k8s.io/kubernetes/cmd/kubemark with --morph=kubelet), which
// is the real kubelet, k8s.io/kubernetes/pkg/kubelet, given a fake
// container runtime (k8s.io/cri-client's fake remote runtime), a fake
// cAdvisor and stub container, volume and mount managers: it registers
// its node, renews its lease, and runs each pod bound to it through the
// kubelet's own pod workers and status manager, with containers that
// start at once and never run a process. Both are built like
// kube-apiserver, from k8s.io/kubernetes at KubernetesVersion, into the
// same folder (make scheduler, make kubemark).
const (
	Scheduler = "kube-scheduler"
	Kubemark  = "kubemark"
)

// FindScheduler returns the path of kube-scheduler, as
// FindControllerManager does kube-controller-manager's.
func FindScheduler() (string, error) { return scheduler.find() }

// FindKubemark returns the path of kubemark, as FindControllerManager
// does kube-controller-manager's.
func FindKubemark() (string, error) { return kubemark.find() }
