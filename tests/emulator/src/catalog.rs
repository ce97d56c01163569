//! Databases, tables, partitions and tablets.
//!
//! DDL text is parsed with `doris-sql` (the same parser a client uses for `SHOW CREATE
//! TABLE`), so the emulator accepts Doris's own syntax. Every partition × bucket is a tablet
//! with a stable id drawn from one counter (as Doris's id generator does), so the same DDL
//! sequence always produces the same tablet ids.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, RwLock};

use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use arrow::record_batch::RecordBatch;
use doris_sql::{
    Buckets, Distribution, DorisType, KeyModel, PartitionKind, PartitionValues, TableSchema,
};

use crate::error::EmulatorError;
use crate::storage;

/// Buckets used when the DDL says `BUCKETS AUTO` or gives no distribution.
pub const AUTO_BUCKETS: u32 = 3;

/// One partition of a table.
#[derive(Debug, Clone)]
pub struct PartitionMeta {
    /// Partition id.
    pub id: u64,
    /// Partition name (the table name for an unpartitioned table, as Doris does).
    pub name: String,
    /// Its bounds (`None` for the single partition of an unpartitioned table).
    pub values: Option<PartitionValues>,
}

/// One tablet: a bucket of a partition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TabletMeta {
    /// The tablet id (what `_query_plan` reports and `TABLET(...)` names).
    pub id: u64,
    /// Index into [`Table::partitions`].
    pub partition: usize,
    /// Bucket number within the partition.
    pub bucket: u32,
}

/// An OLAP table with its data.
#[derive(Debug)]
pub struct Table {
    /// Table id.
    pub id: u64,
    /// The database it belongs to.
    pub database: String,
    /// The parsed DDL.
    pub schema: TableSchema,
    /// The Arrow schema of the stored (visible) columns.
    pub arrow_schema: SchemaRef,
    /// Partitions in DDL order.
    pub partitions: Vec<PartitionMeta>,
    /// Buckets per partition.
    pub buckets: u32,
    /// Tablets, partition-major.
    pub tablets: Vec<TabletMeta>,
    /// Visible data, one list of batches per tablet (same order as `tablets`).
    data: Mutex<Vec<Vec<RecordBatch>>>,
    /// The visible version: 1 for a new table, plus one per committed load.
    version: std::sync::atomic::AtomicU64,
    /// When the table was created (Unix seconds; `information_schema.tables.CREATE_TIME`).
    pub created: i64,
}

impl Table {
    fn new(database: &str, schema: TableSchema, ids: &mut IdGen) -> Result<Self, EmulatorError> {
        let fields: Vec<Field> = schema
            .columns
            .iter()
            .map(|c| Field::new(&c.name, storage_type(&c.ty), c.nullable))
            .collect();
        let arrow_schema = Arc::new(Schema::new(fields));
        let buckets = match &schema.distribution {
            Some(Distribution::Hash {
                buckets: Buckets::Fixed(n),
                ..
            })
            | Some(Distribution::Random {
                buckets: Buckets::Fixed(n),
            }) => *n,
            _ => AUTO_BUCKETS,
        };
        if let Some(Distribution::Hash { columns, .. }) = &schema.distribution {
            for c in columns {
                if schema.column(c).is_none() {
                    return Err(EmulatorError::Analysis(format!(
                        "Distribution column[{c}] is not found in table"
                    )));
                }
            }
        }
        let table_id = ids.next();
        let partitions: Vec<PartitionMeta> = match &schema.partitioning {
            Some(p) if !p.partitions.is_empty() => {
                if p.columns.is_empty() {
                    return Err(EmulatorError::Analysis("no partition column".into()));
                }
                p.partitions
                    .iter()
                    .map(|part| PartitionMeta {
                        id: ids.next(),
                        name: part.name.clone(),
                        values: Some(part.values.clone()),
                    })
                    .collect()
            }
            // Unpartitioned tables (and AUTO partitioning, which the emulator does not
            // split yet) have one partition named after the table.
            _ => vec![PartitionMeta {
                id: ids.next(),
                name: schema.name.clone(),
                values: None,
            }],
        };
        let mut tablets = Vec::new();
        for (p, _) in partitions.iter().enumerate() {
            for bucket in 0..buckets {
                tablets.push(TabletMeta {
                    id: ids.next(),
                    partition: p,
                    bucket,
                });
            }
        }
        let data = Mutex::new(vec![Vec::new(); tablets.len()]);
        Ok(Self {
            id: table_id,
            database: database.to_owned(),
            schema,
            arrow_schema,
            partitions,
            buckets,
            tablets,
            data,
            version: std::sync::atomic::AtomicU64::new(1),
            created: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs() as i64),
        })
    }

    /// The table's Arrow schema with every column nullable: rows being loaded or merged may
    /// hold NULLs in NOT NULL columns until they are filtered or filled.
    pub fn nullable_schema(&self) -> SchemaRef {
        Arc::new(Schema::new(
            self.arrow_schema
                .fields()
                .iter()
                .map(|f| f.as_ref().clone().with_nullable(true))
                .collect::<Vec<_>>(),
        ))
    }

    /// The key model, with "no key clause" treated as DUPLICATE (duplicate without keys).
    pub fn key_model(&self) -> KeyModel {
        self.schema.key_model.unwrap_or(KeyModel::Duplicate)
    }

    /// Routes each row of `batch` to a tablet index, or `None` when no partition takes it
    /// (Doris filters such rows: "no partition for this tuple").
    pub fn route(&self, batch: &RecordBatch) -> Result<Vec<Option<usize>>, EmulatorError> {
        let partitions = storage::partition_of_rows(self, batch)?;
        let buckets = storage::bucket_of_rows(self, batch)?;
        Ok(partitions
            .into_iter()
            .zip(buckets)
            .map(|(p, b)| p.map(|p| p * self.buckets as usize + b as usize))
            .collect())
    }

    /// Applies rows already grouped by tablet index, with the table's key-model semantics.
    ///
    /// All or nothing: every tablet is merged first, and the results replace the visible
    /// data only when all merges succeeded (a failed load changes nothing).
    pub fn apply(&self, per_tablet: Vec<Vec<RecordBatch>>) -> Result<(), EmulatorError> {
        let mut data = self.data.lock().map_err(|_| EmulatorError::Poisoned)?;
        let mut merged = Vec::new();
        for (idx, new_batches) in per_tablet.into_iter().enumerate() {
            if !new_batches.is_empty() {
                merged.push((
                    idx,
                    storage::merge_into_tablet(self, data[idx].clone(), new_batches)?,
                ));
            }
        }
        for (idx, batches) in merged {
            data[idx] = batches;
        }
        self.version
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    }

    /// Applies the writes of one transaction that spans tables (an explicit transaction's
    /// INSERTs, in statement order): every table's merge is computed under the locks of all
    /// of them, and the results become visible together, or nothing changes. Tables are
    /// locked in id order, so two such commits never wait on each other in a cycle.
    pub fn apply_together(
        writes: Vec<(Arc<Table>, Vec<Vec<RecordBatch>>)>,
    ) -> Result<(), EmulatorError> {
        let mut tables: Vec<Arc<Table>> = Vec::new();
        let mut per_table: Vec<Vec<Vec<RecordBatch>>> = Vec::new();
        for (table, staged) in writes {
            let at = match tables.iter().position(|t| Arc::ptr_eq(t, &table)) {
                Some(at) => at,
                None => {
                    per_table.push(vec![Vec::new(); table.tablets.len()]);
                    tables.push(table);
                    tables.len() - 1
                }
            };
            for (tablet, batches) in staged.into_iter().enumerate() {
                if let Some(slot) = per_table[at].get_mut(tablet) {
                    slot.extend(batches);
                }
            }
        }
        let mut order: Vec<usize> = (0..tables.len()).collect();
        order.sort_by_key(|&i| tables[i].id);
        let mut guards = Vec::with_capacity(order.len());
        for &i in &order {
            guards.push((
                i,
                tables[i].data.lock().map_err(|_| EmulatorError::Poisoned)?,
            ));
        }
        let mut results = Vec::with_capacity(guards.len());
        for (i, data) in &guards {
            let table = &tables[*i];
            let mut merged = Vec::new();
            for (idx, new_batches) in per_table[*i].iter().enumerate() {
                if !new_batches.is_empty() {
                    merged.push((
                        idx,
                        storage::merge_into_tablet(table, data[idx].clone(), new_batches.clone())?,
                    ));
                }
            }
            results.push(merged);
        }
        for ((i, data), merged) in guards.iter_mut().zip(results) {
            for (idx, batches) in merged {
                data[idx] = batches;
            }
            tables[*i]
                .version
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        Ok(())
    }

    /// Replaces the visible data of the `only` partitions (indexes into
    /// [`Self::partitions`]; every partition when `None`) with rows grouped by tablet index
    /// (INSERT OVERWRITE): the new rows are merged among themselves with the key model's
    /// semantics, every replaced tablet without new rows becomes empty, the other
    /// partitions keep their rows. All or nothing, as [`Self::apply`].
    pub fn replace(
        &self,
        per_tablet: Vec<Vec<RecordBatch>>,
        only: Option<&[usize]>,
    ) -> Result<(), EmulatorError> {
        let mut data = self.data.lock().map_err(|_| EmulatorError::Poisoned)?;
        let replaced_here =
            |idx: usize| only.is_none_or(|parts| parts.contains(&self.tablets[idx].partition));
        let mut replaced: Vec<Vec<RecordBatch>> = (0..data.len())
            .map(|idx| {
                if replaced_here(idx) {
                    Vec::new()
                } else {
                    data[idx].clone()
                }
            })
            .collect();
        for (idx, new_batches) in per_tablet.into_iter().enumerate() {
            if !new_batches.is_empty() && idx < replaced.len() {
                if !replaced_here(idx) {
                    return Err(EmulatorError::Internal(
                        "rows staged outside the overwritten partitions".into(),
                    ));
                }
                replaced[idx] = storage::merge_into_tablet(self, Vec::new(), new_batches)?;
            }
        }
        *data = replaced;
        self.version
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    }

    /// The visible version (what `_query_plan` reports for each tablet).
    pub fn version(&self) -> u64 {
        self.version.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// A snapshot of the visible data of the given tablet indexes (all when `None`).
    pub fn snapshot(&self, tablets: Option<&[usize]>) -> Result<Vec<RecordBatch>, EmulatorError> {
        let data = self.data.lock().map_err(|_| EmulatorError::Poisoned)?;
        Ok(match tablets {
            None => data.iter().flatten().cloned().collect(),
            Some(idx) => idx
                .iter()
                .filter_map(|i| data.get(*i))
                .flatten()
                .cloned()
                .collect(),
        })
    }

    /// The visible data of every tablet, in tablet order (for snapshots).
    pub fn tablet_batches(&self) -> Result<Vec<Vec<RecordBatch>>, EmulatorError> {
        Ok(self
            .data
            .lock()
            .map_err(|_| EmulatorError::Poisoned)?
            .clone())
    }

    /// Rows visible per tablet, in tablet order.
    pub fn rows_per_tablet(&self) -> Result<Vec<usize>, EmulatorError> {
        let data = self.data.lock().map_err(|_| EmulatorError::Poisoned)?;
        Ok(data
            .iter()
            .map(|b| b.iter().map(RecordBatch::num_rows).sum())
            .collect())
    }

    /// Removes every row (TRUNCATE TABLE).
    pub fn truncate(&self) -> Result<(), EmulatorError> {
        let mut data = self.data.lock().map_err(|_| EmulatorError::Poisoned)?;
        data.iter_mut().for_each(Vec::clear);
        Ok(())
    }

    /// The index in [`Self::partitions`] of the partition named `name` (compared without
    /// case, as Doris does).
    pub fn partition_index(&self, name: &str) -> Option<usize> {
        self.partitions
            .iter()
            .position(|p| p.name.eq_ignore_ascii_case(name))
    }

    /// Removes every row of the named partitions; an unknown name changes nothing and is
    /// an error.
    pub fn truncate_partitions(&self, names: &[String]) -> Result<(), EmulatorError> {
        let mut wanted = Vec::with_capacity(names.len());
        for name in names {
            let at = self.partition_index(name).ok_or_else(|| {
                EmulatorError::Analysis(format!(
                    "Partition[{name}] does not exist in table[{}]",
                    self.schema.name
                ))
            })?;
            wanted.push(at);
        }
        let mut data = self.data.lock().map_err(|_| EmulatorError::Poisoned)?;
        for (tablet, rows) in self.tablets.iter().zip(data.iter_mut()) {
            if wanted.contains(&tablet.partition) {
                rows.clear();
            }
        }
        Ok(())
    }
}

/// The Arrow type the emulator stores a Doris column as: the client-facing mapping of
/// `doris-sql`, or raw bytes for opaque aggregate states (HLL, BITMAP, …).
pub fn storage_type(ty: &DorisType) -> DataType {
    ty.to_arrow().unwrap_or(DataType::Binary)
}

/// Doris draws every object id from one counter; so does the emulator.
#[derive(Debug)]
struct IdGen(u64);

impl IdGen {
    fn next(&mut self) -> u64 {
        self.0 += 1;
        self.0
    }
}

#[derive(Debug)]
struct Database {
    id: u64,
    tables: BTreeMap<String, Arc<Table>>,
}

#[derive(Debug)]
struct State {
    databases: BTreeMap<String, Database>,
    ids: IdGen,
}

/// The catalog shared by every face of the emulator.
#[derive(Debug)]
pub struct Catalog {
    state: RwLock<State>,
    /// Which of `FeNameFormat`'s rules new names follow.
    name_rules: crate::names::NameRules,
}

impl Catalog {
    /// An empty catalog whose new names follow `name_rules`.
    pub fn with_name_rules(name_rules: crate::names::NameRules) -> Self {
        Self {
            name_rules,
            ..Self::default()
        }
    }
}

impl Default for Catalog {
    fn default() -> Self {
        Self {
            state: RwLock::new(State {
                databases: BTreeMap::new(),
                ids: IdGen(10_000),
            }),
            name_rules: crate::names::NameRules::default(),
        }
    }
}

impl Catalog {
    fn read(&self) -> Result<std::sync::RwLockReadGuard<'_, State>, EmulatorError> {
        self.state.read().map_err(|_| EmulatorError::Poisoned)
    }

    fn write(&self) -> Result<std::sync::RwLockWriteGuard<'_, State>, EmulatorError> {
        self.state.write().map_err(|_| EmulatorError::Poisoned)
    }

    /// `CREATE DATABASE [IF NOT EXISTS]`.
    pub fn create_database(&self, name: &str, if_not_exists: bool) -> Result<(), EmulatorError> {
        doris_sql::validate_ident("database", name)
            .map_err(|e| EmulatorError::Analysis(e.to_string()))?;
        let mut state = self.write()?;
        if state.databases.contains_key(name) {
            return if if_not_exists {
                Ok(())
            } else {
                Err(EmulatorError::DatabaseExists(name.to_owned()))
            };
        }
        let id = state.ids.next();
        state.databases.insert(
            name.to_owned(),
            Database {
                id,
                tables: BTreeMap::new(),
            },
        );
        Ok(())
    }

    /// `DROP DATABASE [IF EXISTS]`.
    pub fn drop_database(&self, name: &str, if_exists: bool) -> Result<(), EmulatorError> {
        let mut state = self.write()?;
        if state.databases.remove(name).is_none() && !if_exists {
            return Err(EmulatorError::UnknownDatabase(name.to_owned()));
        }
        Ok(())
    }

    /// `CREATE TABLE` from Doris DDL; `current_db` is used when the name is unqualified.
    pub fn create_table(
        &self,
        current_db: Option<&str>,
        ddl: &str,
        if_not_exists: bool,
    ) -> Result<Arc<Table>, EmulatorError> {
        let schema = crate::create_table::parse_create_table(ddl)?;
        let db = schema
            .database
            .clone()
            .or_else(|| current_db.map(str::to_owned))
            .ok_or(EmulatorError::NoDatabaseSelected)?;
        self.create_table_from_schema(&db, schema, if_not_exists)
    }

    /// A new table in `db` from a parsed schema (`CREATE TABLE` and `CREATE TABLE … LIKE`).
    pub fn create_table_from_schema(
        &self,
        db: &str,
        schema: doris_sql::TableSchema,
        if_not_exists: bool,
    ) -> Result<Arc<Table>, EmulatorError> {
        // Doris checks the new name before it looks for the table.
        crate::names::check_table_name_under(&schema.name, self.name_rules)?;
        for column in &schema.columns {
            crate::names::check_column_name_under(&column.name, self.name_rules)?;
        }
        let db = db.to_owned();
        let mut state = self.write()?;
        let State { databases, ids } = &mut *state;
        let database = databases
            .get_mut(&db)
            .ok_or_else(|| EmulatorError::UnknownDatabase(db.clone()))?;
        if let Some(existing) = database.tables.get(&schema.name) {
            return if if_not_exists {
                Ok(existing.clone())
            } else {
                Err(EmulatorError::TableExists(schema.name.clone()))
            };
        }
        let table = Arc::new(Table::new(&db, schema, ids)?);
        database
            .tables
            .insert(table.schema.name.clone(), table.clone());
        Ok(table)
    }

    /// `DROP TABLE [IF EXISTS]`.
    pub fn drop_table(&self, db: &str, name: &str, if_exists: bool) -> Result<(), EmulatorError> {
        let mut state = self.write()?;
        let database = state
            .databases
            .get_mut(db)
            .ok_or_else(|| EmulatorError::UnknownDatabase(db.to_owned()))?;
        if database.tables.remove(name).is_none() && !if_exists {
            return Err(EmulatorError::UnknownTable {
                database: db.to_owned(),
                table: name.to_owned(),
            });
        }
        Ok(())
    }

    /// Looks a table up.
    pub fn table(&self, db: &str, name: &str) -> Result<Arc<Table>, EmulatorError> {
        let state = self.read()?;
        let database = state
            .databases
            .get(db)
            .ok_or_else(|| EmulatorError::UnknownDatabase(db.to_owned()))?;
        database
            .tables
            .get(name)
            .cloned()
            .ok_or_else(|| EmulatorError::UnknownTable {
                database: db.to_owned(),
                table: name.to_owned(),
            })
    }

    /// True if the database exists.
    pub fn has_database(&self, db: &str) -> Result<bool, EmulatorError> {
        Ok(self.read()?.databases.contains_key(db))
    }

    /// The database id (transactions report it).
    pub fn database_id(&self, db: &str) -> Result<u64, EmulatorError> {
        self.read()?
            .databases
            .get(db)
            .map(|d| d.id)
            .ok_or_else(|| EmulatorError::UnknownDatabase(db.to_owned()))
    }

    /// Database names, sorted.
    pub fn database_names(&self) -> Result<Vec<String>, EmulatorError> {
        Ok(self.read()?.databases.keys().cloned().collect())
    }

    /// Table names of a database, sorted.
    pub fn table_names(&self, db: &str) -> Result<Vec<String>, EmulatorError> {
        let state = self.read()?;
        let database = state
            .databases
            .get(db)
            .ok_or_else(|| EmulatorError::UnknownDatabase(db.to_owned()))?;
        Ok(database.tables.keys().cloned().collect())
    }
}

/// The ids a restored table keeps (so tablet ids survive a restart).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TableIds {
    /// Table id.
    pub table: u64,
    /// Partition ids in order.
    pub partitions: Vec<u64>,
    /// Tablet ids in order.
    pub tablets: Vec<u64>,
}

impl TableIds {
    /// The ids of `table`.
    pub fn of(table: &Table) -> Self {
        Self {
            table: table.id,
            partitions: table.partitions.iter().map(|p| p.id).collect(),
            tablets: table.tablets.iter().map(|t| t.id).collect(),
        }
    }
}

/// One database of an exported catalog: name, id and tables.
pub type ExportedDatabase = (String, u64, Vec<Arc<Table>>);

impl Catalog {
    /// Every database with its tables, and the id counter (for snapshots).
    pub fn export(&self) -> Result<(u64, Vec<ExportedDatabase>), EmulatorError> {
        let state = self.read()?;
        let databases = state
            .databases
            .iter()
            .map(|(name, db)| (name.clone(), db.id, db.tables.values().cloned().collect()))
            .collect();
        Ok((state.ids.0, databases))
    }

    /// Recreates a database with its id (restore from a snapshot).
    pub fn restore_database(&self, name: &str, id: u64) -> Result<(), EmulatorError> {
        let mut state = self.write()?;
        state.ids.0 = state.ids.0.max(id);
        state.databases.insert(
            name.to_owned(),
            Database {
                id,
                tables: BTreeMap::new(),
            },
        );
        Ok(())
    }

    /// Recreates a table from its DDL with its ids, version and data (restore). The DDL is
    /// the emulator's own `SHOW CREATE TABLE` text (names printed as Doris prints them,
    /// inner backticks undoubled), which doris-sql's reader of that text takes.
    pub fn restore_table(
        &self,
        db: &str,
        ddl: &str,
        ids: &TableIds,
        version: u64,
        data: Vec<Vec<RecordBatch>>,
    ) -> Result<(), EmulatorError> {
        let schema = doris_sql::parse_show_create(ddl)
            .map_err(|e| EmulatorError::Analysis(e.to_string()))?;
        let mut state = self.write()?;
        let State {
            databases,
            ids: id_gen,
        } = &mut *state;
        let database = databases
            .get_mut(db)
            .ok_or_else(|| EmulatorError::UnknownDatabase(db.to_owned()))?;
        let mut table = Table::new(db, schema, id_gen)?;
        if table.partitions.len() != ids.partitions.len()
            || table.tablets.len() != ids.tablets.len()
            || data.len() != ids.tablets.len()
        {
            return Err(EmulatorError::Internal(format!(
                "the snapshot of {db}.{} does not match its DDL",
                table.schema.name
            )));
        }
        table.id = ids.table;
        for (p, id) in table.partitions.iter_mut().zip(&ids.partitions) {
            p.id = *id;
        }
        for (t, id) in table.tablets.iter_mut().zip(&ids.tablets) {
            t.id = *id;
        }
        table.data = Mutex::new(data);
        table.version = std::sync::atomic::AtomicU64::new(version);
        let highest = ids
            .tablets
            .iter()
            .chain(&ids.partitions)
            .copied()
            .chain([ids.table])
            .max()
            .unwrap_or(0);
        id_gen.0 = id_gen.0.max(highest);
        database
            .tables
            .insert(table.schema.name.clone(), Arc::new(table));
        Ok(())
    }

    /// Moves the id counter to at least `next` (restore).
    pub fn reserve_ids(&self, next: u64) -> Result<(), EmulatorError> {
        let mut state = self.write()?;
        state.ids.0 = state.ids.0.max(next);
        Ok(())
    }
}

/// Which kind of partitioning a table has (for routing).
pub fn partition_kind(table: &Table) -> Option<PartitionKind> {
    table
        .schema
        .partitioning
        .as_ref()
        .filter(|p| !p.partitions.is_empty())
        .map(|p| p.kind)
}
