/**
 * The StaticSite custom resource, defined once: its TypeScript type, its
 * CustomResourceDefinition (`kcm crd generate dist/src/resources.js`) and
 * the kind the controller reconciles all come from here. The API server
 * enforces the schema's bounds, patterns and CEL rule; the defaulting
 * webhook (webhooks.ts) runs before them.
 */
import { Type, conditions, defineResource, type ObjectOf } from 'kcm/runtime';

export const GROUP = 'sites.example.com';

export const StaticSite = defineResource({
  group: GROUP,
  version: 'v1',
  kind: 'StaticSite',
  shortNames: ['site'],
  categories: ['all'],
  description: 'A static web site: files served by a web server Deployment behind a Service, published under a domain.',
  spec: Type.Object({
    image: Type.String({ default: 'nginx:1.27', description: 'The web server image; it serves /usr/share/nginx/html.' }),
    replicas: Type.Integer({ minimum: 0, maximum: 50, default: 1, description: 'Web server pods.' }),
    content: Type.Record(Type.String(), Type.String(), {
      default: {},
      description: 'The files served, by name (index.html, style.css, ...): names of letters, digits, -, _ and .',
    }),
    domain: Type.String({
      pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$',
      maxLength: 253,
      description: 'The DNS name the site is published under.',
    }),
  }, {
    // CEL, checked by the API server: a transition rule (it sees the old spec as oldSelf on updates).
    'x-kubernetes-validations': [{ rule: 'self.domain == oldSelf.domain', message: 'domain is immutable: create another StaticSite for another domain' }],
  }),
  status: Type.Object({
    observedGeneration: Type.Optional(Type.Integer({ description: 'The generation the status was computed from.' })),
    replicas: Type.Optional(Type.Integer({ description: 'Web server pods that exist.' })),
    availableReplicas: Type.Optional(Type.Integer({ description: 'Web server pods ready to serve.' })),
    selector: Type.Optional(Type.String({ description: 'The label selector of the pods (for the scale subresource).' })),
    clusterIP: Type.Optional(Type.String({ description: "The Service's cluster IP." })),
    url: Type.Optional(Type.String({ description: 'Where the site is published.' })),
    conditions: Type.Optional(conditions()),
  }),
  printerColumns: [
    { name: 'Domain', type: 'string', jsonPath: '.spec.domain' },
    { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' },
    { name: 'Available', type: 'integer', jsonPath: '.status.availableReplicas' },
    { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ],
  scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.selector' },
});

export type StaticSite = ObjectOf<typeof StaticSite>;
