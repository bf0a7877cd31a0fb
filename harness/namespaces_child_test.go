package harness

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/racekit/racekit/harness/internal/testctrl"
)

// The children (childEnv) of the tests of namespaces and fixed ports:
//
//   - watcher-all is the watcher as most operators are written: its
//     informer lists and watches ConfigMaps in every namespace, and it
//     updates whichever it sees;
//   - binder is a program that serves on a fixed port it has no flag for:
//     it binds 127.0.0.1:$BIND_PORT, says so on the wire with one list of
//     the namespace's ConfigMaps, and holds the port until SIGTERM.
const (
	watcherAllChild = "watcher-all"
	binderChild     = "binder"
)

// runNamespacesChild runs the child its environment names, if it is one
// of these, and reports whether it was.
func runNamespacesChild() bool {
	var err error
	switch os.Getenv(childEnv) {
	case watcherAllChild:
		err = watchEveryNamespace()
	case binderChild:
		err = bind(os.Getenv("BIND_PORT"))
	default:
		return false
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	return true
}

func watchEveryNamespace() error {
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG"))
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	fmt.Println("watching configmaps in every namespace")
	if err := testctrl.WatchConfigMaps(ctx, cfg, metav1.NamespaceAll); err != nil {
		return err
	}
	fmt.Println("stopped")
	return nil
}

func bind(port string) error {
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", port))
	if err != nil {
		return err
	}
	defer ln.Close()
	// Said before the call, so that a scenario that has seen the call
	// finds it in the output.
	fmt.Println("bound", ln.Addr())
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG"))
	if err != nil {
		return err
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	// SIGTERM ends the wait below, not the call: a halt that comes while
	// the answer is read lets it be read.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if _, err := kube.CoreV1().ConfigMaps(os.Getenv("NAMESPACE")).List(context.Background(), metav1.ListOptions{}); err != nil {
		return err
	}
	<-ctx.Done()
	return nil
}
