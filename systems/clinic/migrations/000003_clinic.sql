-- Clinic patient chat (seed 003): versioned branch settings, versioned step graphs, and the
-- knowledge base the informational branches answer from. Threads, messages and the dialogue
-- snapshot live in the foundation tables (conversations kind 'clinic', machine_snapshots).

-- One row per (tenant, branch, version); exactly one active version per branch. Version 1 of
-- every branch is written from clinic/seed-branches.ts on a tenant's first clinic request.
create table clinic_branches (
  tenant_id   text not null,
  code        text not null check (code in ('new_booking', 'price_question', 'general_info', 'medical_question', 'reschedule', 'escalate_human')),
  version     integer not null check (version > 0),
  active      boolean not null default false,
  -- {title, system_prompt, rules[], exit_conditions[], knowledge}
  config      jsonb not null,
  created_at  timestamptz not null default now(),
  primary key (tenant_id, code, version)
);
create unique index clinic_branches_one_active on clinic_branches (tenant_id, code) where active;

-- The step graph of a stepped branch ({initial?, steps: [{code, prompt, question, allowed_next, guards}]}),
-- versioned the same way; the dialogue machine is generated from the active one.
create table clinic_step_graphs (
  tenant_id   text not null,
  branch      text not null,
  version     integer not null check (version > 0),
  active      boolean not null default false,
  graph       jsonb not null,
  created_at  timestamptz not null default now(),
  primary key (tenant_id, branch, version)
);
create unique index clinic_step_graphs_one_active on clinic_step_graphs (tenant_id, branch) where active;

create table clinic_kb_documents (
  tenant_id   text not null,
  id          text not null,
  title       text not null,
  body        text not null,
  -- null: any branch may use it; else only that branch.
  branch      text,
  version     integer not null default 1,
  created_at  timestamptz not null default now(),
  updated_at  timestamptz not null default now(),
  primary key (tenant_id, id)
);

-- Chunks are derived data: re-indexing a document replaces all of its chunks.
create table clinic_kb_chunks (
  tenant_id   text not null,
  document_id text not null,
  ord         integer not null,
  heading     text not null,
  text        text not null,
  tsv         tsvector generated always as (to_tsvector('russian', heading || ' ' || text)) stored,
  primary key (tenant_id, document_id, ord),
  foreign key (tenant_id, document_id) references clinic_kb_documents (tenant_id, id) on delete cascade
);
create index clinic_kb_chunks_tsv on clinic_kb_chunks using gin (tsv);
