package deploy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// decodeStrict decodes every document of a YAML file into the Kubernetes
// API type its kind names, refusing a field the type does not have (a
// misspelt or misplaced key, which kubectl would reject or drop).
func decodeStrict(t *testing.T, name string) []any {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var objs []any
	dec := yaml.NewDecoder(bytes.NewReader(b))
	for i := 1; ; i++ {
		var doc map[string]any
		if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("%s: document %d: %v", name, i, err)
		}
		if doc == nil {
			continue
		}
		var obj any
		switch kind := fmt.Sprint(doc["apiVersion"], "/", doc["kind"]); kind {
		case "apps/v1/StatefulSet":
			obj = &appsv1.StatefulSet{}
		case "v1/Service":
			obj = &corev1.Service{}
		case "v1/Secret":
			obj = &corev1.Secret{}
		default:
			t.Fatalf("%s: document %d: %s is not a kind this test knows", name, i, kind)
		}
		js, err := json.Marshal(doc)
		if err != nil {
			t.Fatalf("%s: document %d: %v", name, i, err)
		}
		jd := json.NewDecoder(bytes.NewReader(js))
		jd.DisallowUnknownFields()
		if err := jd.Decode(obj); err != nil {
			t.Fatalf("%s: document %d (%s): %v", name, i, doc["kind"], err)
		}
		objs = append(objs, obj)
	}
	return objs
}

// TestKubernetesManifests decodes deploy/kubernetes/ strictly with the
// Kubernetes API types and checks what the image and serve need: a
// replica per volume claim, the user the image runs as, the security
// settings bubblewrap needs (no privilege, no capability), the data dir
// on the claim, the App's key and secret from a Secret mounted read-only
// where the settings point, the queue's URL from a Secret, probes on
// /healthz and /readyz, a grace period past serve's shutdown, and
// Services that select the pods on the port they listen on.
func TestKubernetesManifests(t *testing.T) {
	var (
		sts      *appsv1.StatefulSet
		services []*corev1.Service
		secrets  = map[string]*corev1.Secret{}
	)
	files, err := filepath.Glob("kubernetes/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests in deploy/kubernetes: %v", err)
	}
	for _, f := range files {
		for _, obj := range decodeStrict(t, f) {
			switch o := obj.(type) {
			case *appsv1.StatefulSet:
				if sts != nil {
					t.Fatalf("%s: a second StatefulSet", f)
				}
				sts = o
			case *corev1.Service:
				services = append(services, o)
			case *corev1.Secret:
				secrets[o.Name] = o
			}
		}
	}
	if sts == nil {
		t.Fatal("deploy/kubernetes has no StatefulSet")
	}
	pod := sts.Spec.Template.Spec
	if len(pod.Containers) != 1 {
		t.Fatalf("the pod has %d containers, want 1", len(pod.Containers))
	}
	c := pod.Containers[0]
	env := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		env[e.Name] = e
	}
	data := dockerfileEnv(t, "KILROY_DATA_DIR")
	port := strings.TrimPrefix(dockerfileEnv(t, "KILROY_LISTEN"), ":")

	check := func(what string, ok bool) {
		t.Helper()
		if !ok {
			t.Errorf("deploy/kubernetes: %s", what)
		}
	}
	check("at least two replicas", sts.Spec.Replicas != nil && *sts.Spec.Replicas >= 2)
	check("a volume claim template \"data\" per replica, ReadWriteOnce", len(sts.Spec.VolumeClaimTemplates) == 1 &&
		sts.Spec.VolumeClaimTemplates[0].Name == "data" &&
		slices.Equal(sts.Spec.VolumeClaimTemplates[0].Spec.AccessModes, []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}))
	check("the selector matches the pod's labels", sts.Spec.Selector != nil && labelsMatch(sts.Spec.Selector.MatchLabels, sts.Spec.Template.Labels))
	check("serve is the container's command", slices.Equal(c.Args, []string{"serve"}))

	// The user of the image's USER line, not root.
	ps := pod.SecurityContext
	check("the pod runs as the image's user 10001, not root", ps != nil && ps.RunAsUser != nil && *ps.RunAsUser == 10001 &&
		ps.RunAsNonRoot != nil && *ps.RunAsNonRoot && ps.FSGroup != nil && *ps.FSGroup == 10001)
	// What docs/serve.md §11 says bubblewrap needs, and no more.
	cs := c.SecurityContext
	check("a container security context", cs != nil)
	if cs != nil {
		check("no privilege and no privilege escalation", (cs.Privileged == nil || !*cs.Privileged) &&
			cs.AllowPrivilegeEscalation != nil && !*cs.AllowPrivilegeEscalation)
		check("every capability dropped, none added", cs.Capabilities != nil && slices.Equal(cs.Capabilities.Drop, []corev1.Capability{"ALL"}) && len(cs.Capabilities.Add) == 0)
		check("seccomp unconfined (bubblewrap makes namespaces and mounts)", cs.SeccompProfile != nil && cs.SeccompProfile.Type == corev1.SeccompProfileTypeUnconfined)
		check("AppArmor unconfined", cs.AppArmorProfile != nil && cs.AppArmorProfile.Type == corev1.AppArmorProfileTypeUnconfined)
		check("/proc unmasked (bubblewrap mounts its own)", cs.ProcMount != nil && *cs.ProcMount == corev1.UnmaskedProcMount)
	}
	check("the pod in a user namespace of its own (hostUsers: false), which an unmasked /proc requires", pod.HostUsers != nil && !*pod.HostUsers)
	check("no service account token in the pod: the bot needs none and a node must not find one", pod.AutomountServiceAccountToken != nil && !*pod.AutomountServiceAccountToken)

	mounts := map[string]corev1.VolumeMount{}
	for _, m := range c.VolumeMounts {
		mounts[m.Name] = m
	}
	check("the data claim at the data dir "+data, mounts["data"].MountPath == data && env["KILROY_DATA_DIR"].Value == data)
	var appSecret *corev1.SecretVolumeSource
	var tun *corev1.HostPathVolumeSource
	for _, v := range pod.Volumes {
		switch v.Name {
		case "app":
			appSecret = v.Secret
		case "tun":
			tun = v.HostPath
		}
	}
	// What compose passes as a device: pasta opens it (network public).
	check("the node's /dev/net/tun at /dev/net/tun, for pasta", tun != nil && tun.Path == "/dev/net/tun" &&
		tun.Type != nil && *tun.Type == corev1.HostPathCharDev && mounts["tun"].MountPath == "/dev/net/tun")
	check("the App's Secret as the volume \"app\", mounted read-only", appSecret != nil && mounts["app"].ReadOnly)
	if appSecret != nil {
		dir := mounts["app"].MountPath
		paths := map[string]bool{}
		for _, it := range appSecret.Items {
			paths[filepath.Join(dir, it.Path)] = true
		}
		check("KILROY_PRIVATE_KEY_FILE and KILROY_WEBHOOK_SECRET_FILE name files of the App's Secret",
			paths[env["KILROY_PRIVATE_KEY_FILE"].Value] && paths[env["KILROY_WEBHOOK_SECRET_FILE"].Value])
		check("the key readable by its owner only", appSecret.DefaultMode != nil && *appSecret.DefaultMode == 0o400)
		if s := secrets[appSecret.SecretName]; s != nil {
			for _, it := range appSecret.Items {
				_, ok := s.StringData[it.Key]
				check(fmt.Sprintf("the example Secret %s has the key %s", s.Name, it.Key), ok)
			}
		} else {
			t.Errorf("deploy/kubernetes: no example of the Secret %s", appSecret.SecretName)
		}
	}
	for _, name := range []string{"KILROY_APP_ID", "KILROY_DATABASE_URL"} {
		ref := env[name].ValueFrom
		check(name+" from a Secret", ref != nil && ref.SecretKeyRef != nil)
		if ref != nil && ref.SecretKeyRef != nil {
			s := secrets[ref.SecretKeyRef.Name]
			_, ok := s.StringData[ref.SecretKeyRef.Key]
			check(fmt.Sprintf("the example Secret %s has the key %s", ref.SecretKeyRef.Name, ref.SecretKeyRef.Key), s != nil && ok)
		}
	}
	check("KILROY_PUBLIC_URL set", env["KILROY_PUBLIC_URL"].Value != "")

	probe := func(p *corev1.Probe, path string) bool {
		return p != nil && p.HTTPGet != nil && p.HTTPGet.Path == path &&
			(p.HTTPGet.Port.String() == port || p.HTTPGet.Port.String() == portName(c, port))
	}
	check("a liveness probe on /healthz", probe(c.LivenessProbe, "/healthz"))
	check("a readiness probe on /readyz", probe(c.ReadinessProbe, "/readyz"))
	if sp := c.StartupProbe; sp != nil {
		check("the startup probe on /healthz waits past serve's 2 minutes for Postgres",
			probe(sp, "/healthz") && sp.PeriodSeconds*sp.FailureThreshold >= 120)
	}
	check("a grace period past serve's shutdown (15 s of requests, then 30 s for runs)",
		pod.TerminationGracePeriodSeconds != nil && *pod.TerminationGracePeriodSeconds >= 45)

	headless := false
	for _, s := range services {
		check("Service "+s.Name+" selects the pods", labelsMatch(s.Spec.Selector, sts.Spec.Template.Labels))
		for _, p := range s.Spec.Ports {
			check("Service "+s.Name+" targets the port serve listens on", p.TargetPort.String() == port || p.TargetPort.String() == portName(c, port))
		}
		if s.Name == sts.Spec.ServiceName {
			headless = s.Spec.ClusterIP == corev1.ClusterIPNone
		}
	}
	check("the StatefulSet's serviceName is a headless Service", headless)
}

// portName is the name of c's container port number port, if it has one.
func portName(c corev1.Container, port string) string {
	for _, p := range c.Ports {
		if fmt.Sprint(p.ContainerPort) == port && p.Name != "" {
			return p.Name
		}
	}
	return "\x00"
}

// labelsMatch says whether every label of sel is in labels.
func labelsMatch(sel, labels map[string]string) bool {
	if len(sel) == 0 {
		return false
	}
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return true
}
