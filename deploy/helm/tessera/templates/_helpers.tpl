{{/* The release's base name, at most 63 characters as DNS labels are. */}}
{{- define "tessera.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "tessera.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The peers' StatefulSet, and the headless Service that names them. */}}
{{- define "tessera.peer" -}}
{{- printf "%s-peer" (include "tessera.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "tessera.gateway" -}}
{{- printf "%s-gateway" (include "tessera.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "tessera.authSecret" -}}
{{- default (printf "%s-auth" (include "tessera.fullname" .)) .Values.auth.existingSecret -}}
{{- end -}}

{{/* Gossip's seed: the headless Service resolves to every peer pod, ready or not. */}}
{{- define "tessera.join" -}}
{{- printf "%s.$(POD_NAMESPACE).svc.%s:%v" (include "tessera.peer" .) .Values.clusterDomain .Values.peer.ports.gossip -}}
{{- end -}}

{{- define "tessera.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{- define "tessera.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ include "tessera.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* Selector labels of one component: pass (list $ "peer") or (list $ "gateway"). */}}
{{- define "tessera.selectorLabels" -}}
{{- $ := index . 0 -}}
app.kubernetes.io/name: {{ include "tessera.name" $ }}
app.kubernetes.io/instance: {{ $.Release.Name }}
app.kubernetes.io/component: {{ index . 1 }}
{{- end -}}

{{/* An env entry read from the auth Secret. */}}
{{- define "tessera.secretEnv" -}}
{{- $ := index . 0 -}}
- name: {{ index . 1 }}
  valueFrom:
    secretKeyRef:
      name: {{ include "tessera.authSecret" $ }}
      key: {{ index . 1 }}
{{- end -}}

{{/* Refuse values that cannot make a working cluster. */}}
{{- define "tessera.validate" -}}
{{- $a := .Values.auth -}}
{{- $given := 0 -}}
{{- range (list $a.accessKey $a.secretKey $a.clusterSecret) -}}
{{- if . -}}{{- $given = add1 $given -}}{{- end -}}
{{- end -}}
{{- if and $a.existingSecret (gt $given 0) -}}
{{- fail "auth: give either existingSecret or the keys, not both" -}}
{{- end -}}
{{- if and (gt $given 0) (lt $given 3) -}}
{{- fail "auth: accessKey, secretKey and clusterSecret must be given together" -}}
{{- end -}}
{{- $code := regexFind "^[0-9]+\\+[0-9]+$" (toString .Values.erasureCode) -}}
{{- if not $code -}}
{{- fail (printf "erasureCode %q: want K+M, e.g. 4+2" (toString .Values.erasureCode)) -}}
{{- end -}}
{{- $km := splitList "+" $code -}}
{{- $width := add (index $km 0 | atoi) (index $km 1 | atoi) -}}
{{- if gt $width (int .Values.peer.replicas) -}}
{{- fail (printf "erasureCode %s needs %d peers, peer.replicas is %d" $code $width (int .Values.peer.replicas)) -}}
{{- end -}}
{{- end -}}
