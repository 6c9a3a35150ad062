-- Evidence workflow (seed 002): the demo accounting dataset the MCP server reads (a stand-in
-- for a 1C base: counterparties with roles, contracts, documents, payments, the supplier
-- settlement register), and one row of engineering artifacts per evidence run (§14.1).
-- Demo rows are loaded by the demo MCP server (evidence/mcp-server/demo-data.ts), not here.

create table acc_settings (
  key   text primary key,
  value text not null
);

create table acc_counterparties (
  id      text primary key,
  name    text not null,
  inn     text not null,
  -- 'supplier', 'customer': one counterparty may hold both roles.
  roles   text[] not null,
  aliases text[] not null default '{}'
);

create table acc_contracts (
  id                 text primary key,
  counterparty_id    text not null references acc_counterparties (id),
  number             text not null,
  signed_on          date not null,
  kind               text not null check (kind in ('purchase', 'sale')),
  payment_terms_days integer not null,
  currency           text not null default 'RUB'
);

create table acc_documents (
  id              text primary key,
  kind            text not null check (kind in ('receipt', 'invoice_received', 'sale')),
  number          text not null,
  doc_date        date not null,
  counterparty_id text not null references acc_counterparties (id),
  contract_id     text not null references acc_contracts (id),
  amount          numeric(15, 2) not null,
  posted          boolean not null,
  -- For an invoice: the receipt it confirms.
  base_document_id text references acc_documents (id)
);
create index acc_documents_counterparty on acc_documents (counterparty_id, doc_date);

create table acc_payments (
  id              text primary key,
  number          text not null,
  pay_date        date not null,
  counterparty_id text not null references acc_counterparties (id),
  contract_id     text not null references acc_contracts (id),
  amount          numeric(15, 2) not null,
  direction       text not null check (direction in ('outgoing', 'incoming')),
  posted          boolean not null
);
create index acc_payments_counterparty on acc_payments (counterparty_id, pay_date);

create table acc_payment_allocations (
  payment_id  text not null references acc_payments (id),
  document_id text not null references acc_documents (id),
  amount      numeric(15, 2) not null,
  primary key (payment_id, document_id)
);

-- The register "Расчёты с поставщиками": + our debt grows (a receipt), − it shrinks (a payment, an advance).
create table acc_settlements (
  id              text primary key,
  period          date not null,
  counterparty_id text not null references acc_counterparties (id),
  contract_id     text not null references acc_contracts (id),
  recorder_kind   text not null check (recorder_kind in ('document', 'payment')),
  recorder_id     text not null,
  amount          numeric(15, 2) not null
);
create index acc_settlements_counterparty on acc_settlements (counterparty_id, period);

create table evidence_runs (
  run_id          text primary key references runs (id) on delete cascade,
  conversation_id text not null references conversations (id) on delete cascade,
  tenant_id       text not null,
  turn            integer not null,
  question        text not null,
  outcome         text not null,
  reason_codes    text[] not null,
  -- QueryFrame, ExecutionPlan, ToolRun[], EvidenceBundle, CoverageReport, FinalAnswerPackage, stage timings.
  artifacts       jsonb not null,
  created_at      timestamptz not null default now()
);
create index evidence_runs_conversation on evidence_runs (conversation_id, turn);
create index runs_outcome_stats on runs (tenant_id, kind, outcome);
