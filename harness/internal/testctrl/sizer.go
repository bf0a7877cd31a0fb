package testctrl

import (
	"context"
	"fmt"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// Size runs the sizer as a client-go controller runs on its own, as Move
// does. A request is a ConfigMap whose data.size is the size asked for
// and data.to names the ConfigMap that holds the size applied (its
// data.size). Each sync reads the applied size live and sets it to the
// one asked for.
//
// follow says what it does with a request smaller than the size applied.
// Unfollowing, it refuses, as rabbitmq cluster-operator refuses to scale
// a cluster down (its #758): it leaves the size, and writes the refusal to
// the applied ConfigMap's data.refused. So where it ends depends on which
// requests it saw: asked for 3, then 2, it ends at 3 when it saw the 3,
// and at 2 when its watch never showed it the 3 (an unobserved state,
// Sieve's third class). Following, it applies every request, and ends at
// the last one asked for whatever it saw.
func Size(ctx context.Context, cfg *rest.Config, namespace string, follow bool) error {
	return runConfigMaps(ctx, cfg, namespace, func(kube kubernetes.Interface, lister corev1listers.ConfigMapLister) syncFunc {
		return (&sizer{kube: kube.CoreV1(), lister: lister, follow: follow}).sync
	})
}

// sizer is the sync of Size.
type sizer struct {
	kube   corev1client.CoreV1Interface
	lister corev1listers.ConfigMapLister
	follow bool
}

func (s *sizer) sync(ctx context.Context, key string) error {
	ns, name, _ := cache.SplitMetaNamespaceKey(key)
	req, err := s.lister.ConfigMaps(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil || req.Data["to"] == "" {
		return err
	}
	want, err := strconv.Atoi(req.Data["size"])
	if err != nil {
		return nil // nothing to apply: not a size
	}
	cms := s.kube.ConfigMaps(ns)
	applied, err := cms.Get(ctx, req.Data["to"], metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("read %s: %w", req.Data["to"], err)
	}
	have, _ := strconv.Atoi(applied.Data["size"])
	next := applied.DeepCopy()
	if next.Data == nil {
		next.Data = map[string]string{}
	}
	switch {
	case want < have && !s.follow:
		next.Data["refused"] = fmt.Sprintf("%d under %d", want, have)
	default:
		next.Data["size"] = strconv.Itoa(want)
		delete(next.Data, "refused")
	}
	if next.Data["size"] == applied.Data["size"] && next.Data["refused"] == applied.Data["refused"] {
		return nil
	}
	if _, err := cms.Update(ctx, next, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("apply %s to %s: %w", req.Data["size"], req.Data["to"], err)
	}
	return nil
}
