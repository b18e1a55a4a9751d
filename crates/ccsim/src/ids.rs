//! Typed indices into the simulator's arenas. A `LinkId` can never be used where
//! a `FlowId` is expected, and all of them are plain `u32`s in memory.

macro_rules! typed_id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
        pub struct $name(pub u32);

        impl $name {
            #[inline]
            pub fn idx(self) -> usize {
                self.0 as usize
            }
        }
    };
}

typed_id!(
    /// A node: host or router.
    NodeId
);
typed_id!(
    /// A unidirectional link.
    LinkId
);
typed_id!(
    /// A flow: one transport connection (or one UDP stream) between two hosts.
    FlowId
);
typed_id!(
    /// A packet slot in the simulator's packet pool.
    PacketId
);
