/**
 * A resource definition using every schema feature kcm/runtime converts,
 * for the round-trip and `kcm crd` tests (test data, not shipped).
 */
import { Type } from 'typebox';
import { defineResource } from '../resource.js';
import { conditions, embeddedResource, intOrString, listMap, listSet, preserveUnknownFields, quantity } from '../schema.js';

export const Site = defineResource({
  group: 'sites.example.com',
  version: 'v1',
  kind: 'StaticSite',
  shortNames: ['site'],
  categories: ['all'],
  description: 'A static web site.',
  spec: Type.Object({
    image: Type.String({ default: 'nginx:1.27', description: 'The web server image.' }),
    replicas: Type.Integer({ minimum: 0, maximum: 100, default: 1 }),
    content: Type.Record(Type.String(), Type.String(), { description: 'Files served, by name.' }),
    domain: Type.String({ pattern: '^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$', maxLength: 253 }),
    tier: Type.Optional(Type.Union([Type.Literal('free'), Type.Literal('pro')])),
    weight: Type.Optional(Type.Number({ exclusiveMinimum: 0 })),
    maxSurge: Type.Optional(intOrString()),
    memory: Type.Optional(quantity()),
    extra: Type.Optional(preserveUnknownFields()),
    template: Type.Optional(embeddedResource()),
    note: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    tls: Type.Optional(Type.Boolean()),
    aliases: Type.Optional(listSet(Type.String())),
    backends: Type.Optional(listMap(Type.Object({ name: Type.String(), port: Type.Integer(), labels: Type.Optional(Type.Record(Type.String(), Type.String())) }), ['name'])),
    matrix: Type.Optional(Type.Array(Type.Array(Type.Integer()))),
    created: Type.Optional(Type.String({ format: 'date-time' })),
  }),
  status: Type.Object({
    observedGeneration: Type.Optional(Type.Integer()),
    availableReplicas: Type.Optional(Type.Integer()),
    replicas: Type.Optional(Type.Integer()),
    selector: Type.Optional(Type.String()),
    clusterIP: Type.Optional(Type.String()),
    conditions: Type.Optional(conditions()),
  }),
  printerColumns: [
    { name: 'Domain', type: 'string', jsonPath: '.spec.domain' },
    { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' },
    { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ],
  scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.selector' },
});

/** A second version of the same kind, served but not stored. */
export const SiteV1beta1 = defineResource({
  group: 'sites.example.com',
  version: 'v1beta1',
  kind: 'StaticSite',
  shortNames: ['site'],
  categories: ['all'],
  storage: false,
  spec: Type.Object({ image: Type.String(), replicas: Type.Integer() }),
});
