package apitest

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The wrappers' metadata methods share these.

func setLabel(m *metav1.ObjectMeta, key, value string) {
	if m.Labels == nil {
		m.Labels = map[string]string{}
	}
	m.Labels[key] = value
}

func setAnnotation(m *metav1.ObjectMeta, key, value string) {
	if m.Annotations == nil {
		m.Annotations = map[string]string{}
	}
	m.Annotations[key] = value
}

func deleting(m *metav1.ObjectMeta, at time.Time) {
	m.DeletionTimestamp = &metav1.Time{Time: at}
}
