mod pipe;
