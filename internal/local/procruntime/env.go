package procruntime

import (
	"context"
	"fmt"
	"maps"
	"net/url"
	"os"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// vars is a container's environment as its spec defines it: envFrom, then env, in that order
// of precedence, with env values expanded.
type vars struct {
	values map[string]string
	// service are the variables the kubelet adds for the API server's Service; the container's
	// own variables of the same name win.
	service map[string]string
}

// lookup resolves $(VAR) in command, args and subPathExpr: the container's variables, then the
// service's.
func (v *vars) lookup() func(string) (string, bool) { return lookupIn(v.values, v.service) }

// env computes the container's variables as the kubelet's makeEnvironmentVariables does.
func (s *start) env(ctx context.Context) (*vars, error) {
	service, err := serviceEnv(s.r.Server.Host)
	if err != nil {
		return nil, err
	}
	v := &vars{values: map[string]string{}, service: service}
	for i, from := range s.c.EnvFrom {
		if err := s.envFrom(ctx, v, from, i); err != nil {
			return nil, err
		}
	}
	for i := range s.c.Env {
		e := &s.c.Env[i]
		field := fmt.Sprintf("env[%d] (%s)", i, e.Name)
		if e.Value != "" || e.ValueFrom == nil {
			// Earlier variables, and the service's, are visible to later ones.
			v.values[e.Name] = expand(e.Value, v.lookup())
			continue
		}
		val, set, err := s.valueFrom(ctx, e.ValueFrom)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", field, err)
		}
		if set {
			v.values[e.Name] = val
		}
	}
	return v, nil
}

// envFrom adds the keys of a ConfigMap or Secret, with the source's prefix. Keys that cannot
// be variable names (empty, or holding '=') are skipped, as the kubelet skips invalid keys.
func (s *start) envFrom(ctx context.Context, v *vars, from corev1.EnvFromSource, i int) error {
	var data map[string][]byte
	switch {
	case from.ConfigMapRef != nil:
		cm, err := s.objects.configMap(ctx, from.ConfigMapRef.Name)
		if err != nil {
			return fmt.Errorf("envFrom[%d].configMapRef: reading ConfigMap %s: %w", i, from.ConfigMapRef.Name, err)
		}
		if cm == nil {
			if isTrue(from.ConfigMapRef.Optional) {
				return nil
			}
			return fmt.Errorf("envFrom[%d].configMapRef: ConfigMap %s/%s not found; create it or set optional: true", i, s.pod.Namespace, from.ConfigMapRef.Name)
		}
		data = configMapData(cm)
	case from.SecretRef != nil:
		sec, err := s.objects.secret(ctx, from.SecretRef.Name)
		if err != nil {
			return fmt.Errorf("envFrom[%d].secretRef: reading Secret %s: %w", i, from.SecretRef.Name, err)
		}
		if sec == nil {
			if isTrue(from.SecretRef.Optional) {
				return nil
			}
			return fmt.Errorf("envFrom[%d].secretRef: Secret %s/%s not found; create it or set optional: true", i, s.pod.Namespace, from.SecretRef.Name)
		}
		data = secretData(sec)
	default:
		return fmt.Errorf("envFrom[%d]: neither configMapRef nor secretRef is set", i)
	}
	for k, val := range data {
		if k == "" || strings.Contains(k, "=") {
			continue
		}
		v.values[from.Prefix+k] = string(val)
	}
	return nil
}

// valueFrom resolves one env[].valueFrom; set is false when an optional source is missing (the
// variable is then not defined at all).
func (s *start) valueFrom(ctx context.Context, from *corev1.EnvVarSource) (val string, set bool, err error) {
	switch {
	case from.FieldRef != nil:
		val, err := fieldValue(s.pod, from.FieldRef.FieldPath, s.r.address())
		if err != nil {
			return "", false, fmt.Errorf("valueFrom.fieldRef: %w", err)
		}
		return val, true, nil
	case from.ResourceFieldRef != nil:
		c := s.c
		if name := from.ResourceFieldRef.ContainerName; name != "" && name != c.Name {
			if c, err = findContainer(&s.pod.Spec, name); err != nil {
				return "", false, fmt.Errorf("valueFrom.resourceFieldRef.containerName: %w", err)
			}
		}
		val, err := resourceValue(c, from.ResourceFieldRef, s.r.nodeAllocatable())
		if err != nil {
			return "", false, fmt.Errorf("valueFrom.resourceFieldRef: %w", err)
		}
		return val, true, nil
	case from.ConfigMapKeyRef != nil:
		ref := from.ConfigMapKeyRef
		cm, err := s.objects.configMap(ctx, ref.Name)
		if err != nil {
			return "", false, fmt.Errorf("valueFrom.configMapKeyRef: reading ConfigMap %s: %w", ref.Name, err)
		}
		return keyValue(configMapData(cm), cm != nil, "ConfigMap", s.pod.Namespace, ref.Name, ref.Key, isTrue(ref.Optional), "valueFrom.configMapKeyRef")
	case from.SecretKeyRef != nil:
		ref := from.SecretKeyRef
		sec, err := s.objects.secret(ctx, ref.Name)
		if err != nil {
			return "", false, fmt.Errorf("valueFrom.secretKeyRef: reading Secret %s: %w", ref.Name, err)
		}
		return keyValue(secretData(sec), sec != nil, "Secret", s.pod.Namespace, ref.Name, ref.Key, isTrue(ref.Optional), "valueFrom.secretKeyRef")
	}
	return "", false, fmt.Errorf("valueFrom: none of fieldRef, resourceFieldRef, configMapKeyRef, secretKeyRef is set (fileKeyRef is not supported)")
}

func keyValue(data map[string][]byte, found bool, kind, ns, name, key string, optional bool, field string) (string, bool, error) {
	if !found {
		if optional {
			return "", false, nil
		}
		return "", false, fmt.Errorf("%s: %s %s/%s not found; create it or set optional: true", field, kind, ns, name)
	}
	val, ok := data[key]
	if !ok {
		if optional {
			return "", false, nil
		}
		return "", false, fmt.Errorf("%s: %s %s/%s has no key %q; add it or set optional: true", field, kind, ns, name, key)
	}
	return string(val), true, nil
}

func isTrue(b *bool) bool { return b != nil && *b }

// serviceEnv are the variables the kubelet gives every container for the API server's Service
// ("kubernetes" in namespace default), here the address of the API server the processes reach.
func serviceEnv(host string) (map[string]string, error) {
	if !strings.Contains(host, "://") {
		host = "https://" + host // rest.Config's Host may be host:port
	}
	u, err := url.Parse(host)
	if err != nil || u.Hostname() == "" {
		return nil, fmt.Errorf("Runtime.Server.Host %q is not a URL such as https://127.0.0.1:6443", host)
	}
	port := u.Port()
	if port == "" {
		port = "443"
		if u.Scheme == "http" {
			port = "80"
		}
	}
	return map[string]string{"KUBERNETES_SERVICE_HOST": u.Hostname(), "KUBERNETES_SERVICE_PORT": port}, nil
}

// processEnv is the environment the process gets, sorted by name: the container's variables with
// their paths rewritten, the service's variables, and what the image would provide and a local
// process lacks (PATH from this program, HOME and HOSTNAME), plus KUBECONFIG for the service
// account, each unless the container defines it.
func (s *start) processEnv(v *vars, mounts []mount) ([]string, error) {
	prefixes := mountPaths(mounts)
	out := make(map[string]string, len(v.values)+6)
	for k, val := range v.values {
		out[k] = s.rewrite(val, prefixes)
	}
	defaults := map[string]string{"PATH": os.Getenv("PATH"), "HOME": s.dir, "HOSTNAME": s.pod.Name}
	maps.Copy(defaults, s.r.Env)
	maps.Copy(defaults, v.service)
	if kc, ok, err := s.kubeconfig(mounts); err != nil {
		return nil, err
	} else if ok {
		defaults["KUBECONFIG"] = kc
	}
	for k, val := range defaults {
		if _, set := out[k]; !set {
			out[k] = val
		}
	}
	env := make([]string, 0, len(out))
	for _, k := range slices.Sorted(maps.Keys(out)) {
		env = append(env, k+"="+out[k])
	}
	return env, nil
}
