import { describeValue, optionError } from '@jobhook/core/internal';

/** Default of `table`. */
export const DEFAULT_TABLE = 'jobhook_jobs';

/** A plain SQL identifier: quoted as it is, so it keeps its case. */
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** The table the store keeps its rows in, quoted for SQL, and its plain name for messages and lock keys. */
export interface TableName {
  /** `"schema"."table"` or `"table"`. */
  readonly sql: string;
  /** `schema.table` or `table`. */
  readonly plain: string;
  /** `"table_expires_at"`: the index the sweep uses. */
  readonly indexSql: string;
  /** `"schema"` when a schema was named. */
  readonly schemaSql: string | undefined;
}

function checkIdentifier(where: string, name: string, value: unknown): string {
  if (typeof value !== 'string' || !IDENTIFIER.test(value)) {
    throw optionError(
      where,
      `${name} must be an SQL identifier (a letter or _, then letters, digits or _, at most 63), got ${describeValue(value)}`,
    );
  }
  return value;
}

/** Checks `table` and `schema` and quotes them. @throws JobhookError `ERR_OPTION_INVALID` */
export function tableName(where: string, table: unknown, schema: unknown): TableName {
  const name = checkIdentifier(where, 'table', table ?? DEFAULT_TABLE);
  const schemaName = schema === undefined ? undefined : checkIdentifier(where, 'schema', schema);
  const indexName = checkIdentifier(where, 'table', `${name}_expires_at`.slice(0, 63));
  return {
    sql: schemaName === undefined ? `"${name}"` : `"${schemaName}"."${name}"`,
    plain: schemaName === undefined ? name : `${schemaName}.${name}`,
    indexSql: `"${indexName}"`,
    schemaSql: schemaName === undefined ? undefined : `"${schemaName}"`,
  };
}
